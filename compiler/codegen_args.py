"""The view of one argument's check in a generated skill module (§5): its binding, the sources
that may supply it, its missing action, its metadata, and the issues it can raise."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from skillc.compiler import ir
from skillc.compiler.codegen_literals import ROOT_OF_PREFIX, Code, comment, expr_code, has_each, literal, parts_of, unique_code
from skillc.compiler.codegen_names import Names, call_code, changed_kwargs, ident, param_issue, reviewer_note
from skillc.compiler.evidence_fields import resolved_fields
from skillc.runtime.compiled.paths import split_each


@dataclass
class ArgView:
    param: Code
    note: Code
    parts: Code
    has_each: bool
    each_split: Code  # "before, after" of a `[]` path's first `[]`, split once here, not per call
    required: bool
    const: Code | None = None
    bind_kind: str = ""  # "const" | "value" | "template" | ""
    bind_code: Code | None = None
    bind_source: Code | None = None
    bound: bool = False
    matchers: list[tuple[Code, Code, Code]] = field(default_factory=list)  # (if/elif, source, test)
    model_allowed: bool = False
    missing_issue: Code | None = None
    missing_note: Code = Code("")
    enum_name: Code | None = None
    meta: Code = Code("")
    read: Code = Code("")  # code reading a plain (no `[]`) argument's value from `args`
    provenance_issue: Code | None = None
    provenance_note: Code = Code("")
    enum_issue: Code | None = None
    evidence_fields: tuple[Any, ...] = ()  # resolved typed-evidence fields (compiler.evidence_fields)
    path: tuple[Any, ...] = ()  # the argument's parts as a value (the tool's facts name them: ToolMeta.sensitive_paths)
    sensitive: bool = False


_MATCHER = {
    "USER": "ctx.user_mentions({p}, v)",
    "EVIDENCE": "ctx.evidence_has(v)",
    "NODE_OUTPUT": "ctx.node_output_has({p}, v)",
    "SHARED": "ctx.shared_has({p}, v)",
    "SESSION": "ctx.session_has({p}, v)",
    "PRIOR_TASK": "ctx.prior_has(v, None)",
}
_SOURCES = ("USER", "EVIDENCE", "NODE_OUTPUT", "SHARED", "SESSION", "PRIOR_TASK", "MODEL", "CONTRACT", "PLATFORM")


def _arg_note(param: str, arg: ir.ArgContract, sources: Sequence[str]) -> Code:
    """What a reviewer reads above an argument's check: its binding, sources and missing action."""
    bits: list[str | Code] = [comment(param)]
    if arg.has_const:
        bits.append("const")
    elif arg.from_ is not None:
        bits += ["from", comment(arg.from_.text)] + (["(UNIQUE)"] if arg.when == "UNIQUE" else [])
    if sources:
        bits += ["sources", ", ".join(s for s in sources if s in _SOURCES)]
    if arg.evidence:
        bits += ["evidence", ", ".join(comment(f.text) for f in arg.evidence)]
    if not arg.required:
        bits.append("optional")
    if arg.enum:
        bits.append("enum")
    if arg.sensitive:
        bits.append("sensitive")
    return reviewer_note(*bits)


def arg_view(names: Names, tool: str, param: str, arg: ir.ArgContract, consts: list[Code],
              contract: ir.Contract | None = None) -> ArgView:
    """The view of one argument's check; the module-level constants it needs (its ParamIssues and
    enum set) are appended to `consts` in the order the template writes them."""
    parts = parts_of(arg.path.parts) if arg.path.parts else (("k", param),)
    sources = list(dict.fromkeys(arg.sources))
    view = ArgView(
        param=literal(param),
        note=_arg_note(param, arg, sources),
        parts=literal(parts),
        has_each=has_each(parts),
        each_split=_each_split(parts),
        required=arg.required,
        read=_read_code(parts),
        path=parts,
        sensitive=arg.sensitive,
    )
    _set_binding(view, arg, parts)
    view.model_allowed = "MODEL" in sources
    if not view.bound:
        fields = resolved_fields(contract, arg) if contract is not None and arg.evidence else None
        view.matchers = _matchers(param, sources, fields)
        view.evidence_fields = fields if fields is not None and "EVIDENCE" in sources else ()
    if arg.required:
        _set_missing_issue(view, names, tool, param, arg, consts)
    if arg.enum:
        view.enum_name = _allowed_set(names, tool, param, arg, consts)
    view.meta = _arg_meta(view, param, parts, arg, sources)
    if not view.model_allowed:
        _set_provenance_issue(view, names, tool, param, arg, "USER" in sources, consts)
    if arg.enum:
        definition, view.enum_issue = param_issue(names, tool, param, "ENUM", "ASK_USER", arg.label)
        consts.append(definition)
    return view


def _each_split(parts: tuple[Any, ...]) -> Code:
    """The arguments `rt.each_values` takes for a `[]` path (empty for a plain one)."""
    split = split_each(parts)
    return Code("") if split is None else Code(f"{literal(split[0])}, {literal(split[1])}")


def _read_code(parts: tuple[Any, ...]) -> Code:
    """Code reading the argument's value from `args`: a plain top-level key is a dict lookup
    (what get_path would do on one member, without the call)."""
    if len(parts) == 1 and parts[0][0] == "k":
        return Code(f"args.get({literal(parts[0][1])}, MISSING)")  # the check's local MISSING
    return Code(f"rt.get_path(args, {literal(parts)})")


def _set_binding(view: ArgView, arg: ir.ArgContract, parts: tuple[Any, ...]) -> None:
    """How the runtime fills the argument (§5.2, §5.4): a constant, a value read from its `from`
    expression, or an array template copying item by item when both paths hold `[]`."""
    expr = arg.from_
    if arg.has_const:
        view.bind_kind, view.const, view.bind_source = "const", literal(arg.const), literal("CONTRACT")
    elif expr is not None:
        source = ir.SOURCE_OF_PREFIX.get(expr.kind, "NODE_OUTPUT")
        view.bind_source = literal(source)
        from_parts = parts_of(getattr(expr, "path", []) or [])
        if arg.when == "UNIQUE":
            view.bind_kind, view.bind_code = "value", unique_code(expr)
        elif expr.kind in ROOT_OF_PREFIX and has_each(parts) and has_each(from_parts):
            view.bind_kind = "template"
            view.bind_code = Code(f"rt.get_path({ROOT_OF_PREFIX[expr.kind]}, {literal(from_parts)})")
        else:
            view.bind_kind, view.bind_code = "value", expr_code(expr)
    view.bound = arg.has_const or expr is not None


def _matchers(param: str, sources: Sequence[str], fields: tuple[Any, ...] | None = None) -> list[tuple[Code, Code, Code]]:
    """The if/elif chain testing an unbound value against each legal source in contract order
    (§5.3); sources after MODEL are never reached, since MODEL accepts any value. With typed
    evidence (`fields`: the resolved `evidence` names) EVIDENCE looks only there."""
    matchers: list[tuple[Code, Code, Code]] = []
    for s in sources:
        if s == "MODEL":
            break
        if s in _MATCHER:
            keyword = Code("elif" if matchers else "if")
            test = _MATCHER[s].format(p=literal(param))
            if s == "EVIDENCE" and fields is not None:
                test = f"ctx.evidence_in(v, {literal(fields)})"
            matchers.append((keyword, literal(s), Code(test)))
    return matchers


def _set_missing_issue(view: ArgView, names: Names, tool: str, param: str, arg: ir.ArgContract, consts: list[Code]) -> None:
    """The issue a missing required argument raises (§5.5); none for CALL_TOOL without a tool,
    which lets the call go ahead."""
    m = arg.missing
    issue = None
    if m.action == "ASK_USER":
        issue = param_issue(names, tool, param, "MISSING", "ASK_USER", arg.label)
    elif m.action == "CALL_TOOL" and m.tool:
        issue = param_issue(names, tool, param, "MISSING", "CALL_TOOL", arg.label, tool=m.tool)
    elif m.action == "FAIL":
        issue = param_issue(names, tool, param, "MISSING", "FAIL", arg.label, message=m.message)
    if issue is not None:
        consts.append(issue[0])
        view.missing_issue = issue[1]
        view.missing_note = reviewer_note(m.action, "(§5.5)") if m.action != "CALL_TOOL" else reviewer_note("CALL_TOOL", comment(m.tool), "(§5.5)")


def _allowed_set(names: Names, tool: str, param: str, arg: ir.ArgContract, consts: list[Code]) -> Code:
    """The frozenset constant of an enum's allowed values, as the runtime's `enum_key`s (exact JSON
    equality: `1`, `true` and `"1"` stay distinct); returns its name."""
    from skillc.runtime import support as rt

    keys = sorted({rt.enum_key(v) for v in arg.enum}, key=repr)
    name = names.make(("enum", tool, param), ident(tool), ident(param), "ALLOWED")
    consts.append(Code(f"{name} = frozenset({literal(keys)})"))
    return name


def _arg_meta(view: ArgView, param: str, parts: tuple[Any, ...], arg: ir.ArgContract, sources: Sequence[str]) -> Code:
    """The argument's rt.ArgMeta record (what approval summaries, traces and diff read)."""
    expr = arg.from_
    is_platform = expr is not None and expr.kind == "platform"
    evidence = "EVIDENCE" in sources or (expr is not None and expr.kind == "evidence")
    return call_code(
        "rt.ArgMeta",
        changed_kwargs([
            ("path", literal(param), None),
            ("parts", literal(parts), None),
            ("label", arg.label, None),
            ("sensitive", arg.sensitive, False),
            ("bound", view.bound, False),
            ("platform", is_platform, False),
            ("sources", tuple(sources), ()),
            ("expected_evidence", evidence, False),
            ("evidence_fields", view.evidence_fields, ()),
        ]),
        8,
        len(view.param) + 3,
    )


def _set_provenance_issue(view: ArgView, names: Names, tool: str, param: str, arg: ir.ArgContract, user_allowed: bool,
                          consts: list[Code]) -> None:
    """The issue for a value no legal source vouches for (§5.3 step 4): ask the user when USER is a
    legal source, else reject the call."""
    action = "ASK_USER" if user_allowed else "REJECT"
    definition, view.provenance_issue = param_issue(names, tool, param, "PROVENANCE", action, arg.label)
    consts.append(definition)
    view.provenance_note = reviewer_note(action, "(§5.3 step 4)")
