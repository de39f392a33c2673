"""The views the skill module template renders: one per tool, argument, input and output.

Every generated name derives from what it denotes (`ident`: a tool name, an argument path, an
issue kind), never from a position; every value is a literal made by `codegen` (`literal`,
`comment`). A metadata field at its default is left out of the module (`_kwargs`).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from skillc.compiler import ir
from skillc.compiler.codegen import _ROOT_OF_PREFIX, Code, UnsafeLiteral, _has_each, _unique_code, comment, expr_code, literal, parts_of


# ---------------------------------------------------------------- names


_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*", re.ASCII)


def ident(text: str) -> str:
    """The identifier fragment of a contract name (tool name, argument path).

    A plain ASCII name (letters, digits, single inner underscores, up to 64 characters) is used as
    it is; anything else becomes `0x<10 hex digits of its sha256>` plus its ASCII letters and
    digits for the reader. The two forms never meet (a plain name starts with a letter) and no
    fragment holds `__`, so `_<tool>__<arg>__<KIND>` names are unambiguous. The hash form is
    checked for collisions per module (`Names`)."""
    if len(text) <= 64 and _PLAIN_NAME.fullmatch(text):
        return text
    # surrogatepass only to hash a name into an identifier (no text of it is written): codegen stays
    # safe on IR built directly (tests/test_security_codegen.py); studio text is refused earlier,
    # at the border (compiler.studio_border), and the module's literals escape what they hold.
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    tail = "_".join(re.findall(r"[A-Za-z0-9]+", text, re.ASCII))[:32].strip("_")
    return f"0x{digest}" + (f"_{tail}" if tail else "")


class Names:
    """The names one module defines, each with what it denotes: a second meaning for a name is
    refused (only a sha256 prefix collision between two odd names could cause one)."""

    def __init__(self) -> None:
        self._meaning: dict[str, tuple] = {}

    def make(self, meaning: tuple, *parts: str) -> Code:
        name = "_" + "__".join(parts)
        if self._meaning.setdefault(name, meaning) != meaning:
            raise UnsafeLiteral(f"two contract names map to the generated name {name}")
        return Code(name)


def _note(*pieces: str | Code) -> Code:
    """A reviewer comment from vetted pieces (literals via `comment`, fixed words otherwise)."""
    text = " ".join(p for p in pieces if p)
    if any(ch in text for ch in "\r\n\x0c\x0b\x85\u2028\u2029"):
        raise UnsafeLiteral("line break in comment")
    return Code(text)


def _names_note(values: Iterable[Any]) -> Code:
    return Code(", ".join(comment(v) for v in values))


# ---------------------------------------------------------------- the view the template renders


@dataclass
class _ArgView:
    param: Code
    note: Code
    parts: Code
    has_each: bool
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


def _kwargs(pairs: list[tuple[str, Any, Any]]) -> list[tuple[str, Code]]:
    """(keyword, value, default) -> the keywords whose value differs from the field's default."""
    return [(k, v if isinstance(v, Code) else literal(v)) for k, v, d in pairs if not _same(v, d)]


def _same(value: Any, default: Any) -> bool:
    return not isinstance(value, Code) and type(value) is type(default) and value == default


def _call(func: str, kwargs: list[tuple[str, Code]], indent: int, lead: int = 0, positional: list[Code] | None = None) -> Code:
    """A constructor call on one line when it fits in 100 columns, else one argument per line
    (black's layout); `indent` is the column of the line it starts on, `lead` what precedes it."""
    items = [str(p) for p in positional or []] + [f"{k}={v}" for k, v in kwargs]
    flat = f"{func}({', '.join(items)})"
    if indent + lead + len(flat) <= 100 or not items:
        return Code(flat)
    pad = " " * (indent + 4)
    body = "".join(f"{pad}{item},\n" for item in items)
    return Code(f"{func}(\n{body}{' ' * indent})")


def _issue(names: Names, tool_name: str, param: str, kind: str, action: str, label: str | None, **extra: str | None) -> tuple[Code, Code]:
    """A ParamIssue constant named after its tool, argument and kind (issues are immutable, and
    building one per call would dominate a failing check). Returns (definition, name)."""
    args = [literal(action), literal(param), literal(kind.lower())]
    if label is not None:
        args.append(Code(f"label={literal(label)}"))
    for k, v in extra.items():
        if v is not None:
            args.append(Code(f"{k}={literal(v)}"))
    name = names.make(("issue", tool_name, param, kind), ident(tool_name), ident(param), kind)
    return Code(f"{name} = rt.ParamIssue({', '.join(args)})"), name


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
    if not arg.required:
        bits.append("optional")
    if arg.enum:
        bits.append("enum")
    if arg.sensitive:
        bits.append("sensitive")
    return _note(*bits)


def _arg_view(names: Names, tool: str, param: str, arg: ir.ArgContract, consts: list[Code]) -> _ArgView:
    """The view of one argument's check; the module-level constants it needs (its ParamIssues and
    enum set) are appended to `consts` in the order the template writes them."""
    parts = parts_of(arg.path.parts) if arg.path.parts else (("k", param),)
    sources = list(dict.fromkeys(arg.sources))
    view = _ArgView(
        param=literal(param),
        note=_arg_note(param, arg, sources),
        parts=literal(parts),
        has_each=_has_each(parts),
        required=arg.required,
        read=_read_code(parts),
    )
    _set_binding(view, arg, parts)
    view.model_allowed = "MODEL" in sources
    if not view.bound:
        view.matchers = _matchers(param, sources)
    if arg.required:
        _set_missing_issue(view, names, tool, param, arg, consts)
    if arg.enum:
        view.enum_name = _allowed_set(names, tool, param, arg, consts)
    view.meta = _arg_meta(view, param, parts, arg, sources)
    if not view.model_allowed:
        _set_provenance_issue(view, names, tool, param, arg, "USER" in sources, consts)
    if arg.enum:
        definition, view.enum_issue = _issue(names, tool, param, "ENUM", "ASK_USER", arg.label)
        consts.append(definition)
    return view


def _read_code(parts: tuple) -> Code:
    """Code reading the argument's value from `args`: a plain top-level key is a dict lookup
    (what get_path would do on one member, without the call)."""
    if len(parts) == 1 and parts[0][0] == "k":
        return Code(f"args.get({literal(parts[0][1])}, rt.MISSING)")
    return Code(f"rt.get_path(args, {literal(parts)})")


def _set_binding(view: _ArgView, arg: ir.ArgContract, parts: tuple) -> None:
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
            view.bind_kind, view.bind_code = "value", _unique_code(expr)
        elif expr.kind in _ROOT_OF_PREFIX and _has_each(parts) and _has_each(from_parts):
            view.bind_kind = "template"
            view.bind_code = Code(f"rt.get_path({_ROOT_OF_PREFIX[expr.kind]}, {literal(from_parts)})")
        else:
            view.bind_kind, view.bind_code = "value", expr_code(expr)
    view.bound = arg.has_const or expr is not None


def _matchers(param: str, sources: Sequence[str]) -> list[tuple[Code, Code, Code]]:
    """The if/elif chain testing an unbound value against each legal source in contract order
    (§5.3); sources after MODEL are never reached, since MODEL accepts any value."""
    matchers: list[tuple[Code, Code, Code]] = []
    for s in sources:
        if s == "MODEL":
            break
        if s in _MATCHER:
            keyword = Code("elif" if matchers else "if")
            matchers.append((keyword, literal(s), Code(_MATCHER[s].format(p=literal(param)))))
    return matchers


def _set_missing_issue(view: _ArgView, names: Names, tool: str, param: str, arg: ir.ArgContract, consts: list[Code]) -> None:
    """The issue a missing required argument raises (§5.5); none for CALL_TOOL without a tool,
    which lets the call go ahead."""
    m = arg.missing
    issue = None
    if m.action == "ASK_USER":
        issue = _issue(names, tool, param, "MISSING", "ASK_USER", arg.label)
    elif m.action == "CALL_TOOL" and m.tool:
        issue = _issue(names, tool, param, "MISSING", "CALL_TOOL", arg.label, tool=m.tool)
    elif m.action == "FAIL":
        issue = _issue(names, tool, param, "MISSING", "FAIL", arg.label, message=m.message)
    if issue is not None:
        consts.append(issue[0])
        view.missing_issue = issue[1]
        view.missing_note = _note(m.action, "(§5.5)") if m.action != "CALL_TOOL" else _note("CALL_TOOL", comment(m.tool), "(§5.5)")


def _allowed_set(names: Names, tool: str, param: str, arg: ir.ArgContract, consts: list[Code]) -> Code:
    """The frozenset constant of an enum's allowed values, as the runtime's `enum_key`s (exact JSON
    equality: `1`, `true` and `"1"` stay distinct); returns its name."""
    from skillc.runtime import support as rt

    keys = sorted({rt.enum_key(v) for v in arg.enum}, key=repr)
    name = names.make(("enum", tool, param), ident(tool), ident(param), "ALLOWED")
    consts.append(Code(f"{name} = frozenset({literal(keys)})"))
    return name


def _arg_meta(view: _ArgView, param: str, parts: tuple, arg: ir.ArgContract, sources: Sequence[str]) -> Code:
    """The argument's rt.ArgMeta record (what approval summaries, traces and diff read)."""
    expr = arg.from_
    is_platform = expr is not None and expr.kind == "platform"
    evidence = "EVIDENCE" in sources or (expr is not None and expr.kind == "evidence")
    return _call(
        "rt.ArgMeta",
        _kwargs([
            ("path", literal(param), None),
            ("parts", literal(parts), None),
            ("label", arg.label, None),
            ("sensitive", arg.sensitive, False),
            ("bound", view.bound, False),
            ("platform", is_platform, False),
            ("sources", tuple(sources), ()),
            ("expected_evidence", evidence, False),
        ]),
        8,
        len(view.param) + 3,
    )


def _set_provenance_issue(view: _ArgView, names: Names, tool: str, param: str, arg: ir.ArgContract, user_allowed: bool,
                          consts: list[Code]) -> None:
    """The issue for a value no legal source vouches for (§5.3 step 4): ask the user when USER is a
    legal source, else reject the call."""
    action = "ASK_USER" if user_allowed else "REJECT"
    definition, view.provenance_issue = _issue(names, tool, param, "PROVENANCE", action, arg.label)
    consts.append(definition)
    view.provenance_note = _note(action, "(§5.3 step 4)")


_OPS = {
    "EQ": "rt.op_eq({a}, {v})",
    "NE": "rt.op_ne({a}, {v})",
    "IN": "rt.op_in({a}, {v})",
    "NOT_IN": "rt.op_not_in({a}, {v})",
    "TRUTHY": "rt.op_truthy({a})",
    "EXISTS": "rt.op_exists({a})",
}


def _tool_note(tool: ir.ToolContract) -> Code:
    """The line under a tool's header: what the tool may do, in the spec's words."""
    if tool.side_effect != "WRITE":
        return _note("read only (sideEffect NONE)")
    bits: list[str | Code] = ["WRITE (§14):", "approval before the call;" if tool.effective_confirm else "NO approval (confirm false);"]
    if tool.idempotency_key:
        bits += ["idempotency key", _names_note(p.text for p in tool.idempotency_key) + ";"]
    else:
        bits.append("no idempotency key;")
    bits += ["verified by", comment(tool.verify.tool), "(§6.4)"] if tool.verify and tool.verify.tool else ["no verify (§6.4)"]
    return _note(*bits)


def _success_note(tool: ir.ToolContract) -> Code:
    s = tool.success
    if s is None:
        return _note("no success rule: every response is a business success (§6.1)")
    if s.op is None:
        return _note("success (§6.1): any non-empty response")
    path = comment(s.path.text if s.path else "")
    value = "" if s.op in ("TRUTHY", "EXISTS") else comment(s.value if s.has_value else None)
    return _note("success (§6.1):", path, s.op, value)


def tool_view(names: Names, tool: ir.ToolContract) -> dict[str, Any]:
    """What the skill module template renders for one tool: its argument checks with their
    constants, the success judgement, error paths, extracts, verify arguments and TOOLS record."""
    fn = names.make(("tool", tool.name), ident(tool.name))
    consts: list[Code] = []
    args = [_arg_view(names, tool.name, param, arg, consts) for param, arg in tool.args.items()]
    err = tool.error
    verify = _verify_view(tool.verify)
    has_bind = any(a.bind_kind for a in args)
    return {
        "fn": fn,
        "key": literal(tool.name),
        "note": comment(tool.name),
        "does": _tool_note(tool),
        "consts": consts,
        "args": args,
        "has_bind": has_bind,
        "entity_base": Code("request" if tool.side_effect == "WRITE" else "None"),
        "success_note": _success_note(tool),
        "success_code": _success_code(tool.success),
        "err_code": literal(parts_of(err.code.parts)) if err and err.code else None,
        "err_msg": literal(parts_of(err.message.parts)) if err and err.message else None,
        "extracts": _extract_views(tool.extracts),
        "verify": verify,
        "meta": _tool_meta(tool, fn, args, has_bind, verify),
    }


def _success_code(success: ir.Success | None) -> Code | None:
    """The expression judging a response a business success (§6.1): the rule's operator on the
    value at its path, or `True` for a rule without op (any non-empty response)."""
    if success is None:
        return None
    if success.op is None:
        return Code("True")
    value = success.value if success.has_value else None
    actual = Code(f"rt.get_path(response, {literal(parts_of(success.path.parts) if success.path else ())})")
    return Code(_OPS[success.op].format(a=actual, v=literal(value)))


def _extract_views(extracts: Sequence[ir.Extract]) -> list[dict[str, Any]]:
    """One view per extract; `first` marks the first extract of a key, the one whose value is kept
    (a later one of the same key still counts for emptiness and entities)."""
    views = []
    keys: set[str] = set()
    for ex in extracts:
        path_text = ex.path.text if ex.path else ""
        key = ex.key or path_text
        entity = None
        if ex.entity is not None and ex.entity.type is not None:
            entity = _entity_literal(ex.entity)
        views.append(
            {
                "key": literal(key),
                "note": _note(comment(key), "at", comment(path_text)) if ex.key else comment(key),
                "first": key not in keys,
                "parts": literal(parts_of(ex.path.parts) if ex.path else ()),
                "fields": literal(tuple(ex.fields)),
                "entity": entity,
            }
        )
        keys.add(key)
    return views


def _verify_view(verify: ir.Verify | None) -> dict[str, Any] | None:
    """The arguments of the verify call (§6.4): constants, and paths into the original call's
    request; with no arguments configured the whole request is copied."""
    if verify is None:
        return None
    vargs = []
    for name, va in verify.args.items():
        if va.has_const:
            vargs.append({"name": literal(name), "const": literal(va.const), "parts": None})
        elif va.from_ is not None and va.from_.kind == "call":
            vargs.append({"name": literal(name), "const": None, "parts": literal(parts_of(va.from_.path))})
    return {"args": vargs, "copy_all": not verify.args}


def _tool_meta(tool: ir.ToolContract, fn: Code, args: list[_ArgView], has_bind: bool,
               verify: dict[str, Any] | None) -> list[tuple[Code, Code]]:
    """The keywords of the tool's rt.ToolMeta record: fields off their default, every argument's
    ArgMeta, and the generated functions the tool has (bind, check, judge, extract, verify_args)."""
    idem = tuple(parts_of(p.parts) for p in tool.idempotency_key)
    fns = [("bind", has_bind), ("check", bool(args)), ("judge", tool.success is not None), ("extract", bool(tool.extracts)),
           ("verify_args", verify is not None)]
    meta = [
        ("name", literal(tool.name)),
        *_kwargs([
            ("label", tool.label, None),
            ("side_effect", tool.side_effect, "NONE"),
            ("confirm", tool.effective_confirm, False),
            ("idempotency_key", idem, ()),
            ("verify_tool", tool.verify.tool if tool.verify else None, None),
        ]),
    ]
    if args:
        entries = "".join(f"        {a.param}: {a.meta},\n" for a in args)
        meta.append(("args", Code("{\n" + entries + "    }")))
    meta += [(k, Code(f"{fn}__{k}")) for k, present in fns if present]
    return [(Code(k), v) for k, v in meta]


def _entity_literal(e: ir.Entity) -> Code:
    return _call("rt.EntitySpec", _kwargs([("id", e.id, "id"), ("name", e.name, "name"), ("scalar", e.scalar, None)]), 0,
                 positional=[literal(e.type)])


def input_view(spec: ir.InputSpec) -> dict[str, Any]:
    expr = spec.from_
    prefix = expr.kind if expr is not None else None
    share_key = parts_of(expr.path) if isinstance(expr, (ir.SharedRef, ir.SessionRef)) else None
    if expr is None:
        code, source = Code(f"ctx.upstream_output({literal((('k', spec.name),))})"), "NODE_OUTPUT"
    elif isinstance(expr, (ir.SharedRef, ir.SessionRef)):
        code, source = expr_code(expr), ir.SOURCE_OF_PREFIX[expr.kind]
    elif isinstance(expr, ir.OutputsRef):
        code, source = Code(f"ctx.upstream_output({literal(parts_of(expr.path))})"), "NODE_OUTPUT"
    elif isinstance(expr, ir.PriorRef):
        code, source = expr_code(expr), ir.SOURCE_OF_PREFIX[expr.kind]
    elif isinstance(expr, ir.BareRef):
        code, source = Code(f"ctx.upstream_output({literal(parts_of(expr.path))})"), "NODE_OUTPUT"
    else:
        # §7: "不写或其他前缀" — any other prefix (platform., evidence., inputs., …) reads the nearest
        # finished upstream node's output of the same name as this input.
        code, source = Code(f"ctx.upstream_output({literal((('k', spec.name),))})"), "NODE_OUTPUT"
    meta = _call(
        "rt.InputMeta",
        [("name", literal(spec.name))] + _kwargs([
            ("required", spec.required, True),
            ("provider", spec.provider, None),
            ("prefix", prefix, None),
            ("share_key", share_key, None),
        ]),
        4,
        len(literal(spec.name)) + 3,
    )
    note = _note(comment(spec.name), "from", comment(expr.text)) if expr is not None else _note(comment(spec.name), "from upstream output")
    return {"name": literal(spec.name), "note": note, "code": code, "source": literal(source), "meta": meta}


def output_meta(spec: ir.OutputSpec) -> Code:
    entity = _entity_literal(spec.entity) if spec.entity is not None and spec.entity.type is not None else None
    return _call(
        "rt.OutputMeta",
        [("name", literal(spec.name))] + _kwargs([
            ("type", spec.type, "VALUE"),
            ("fields", tuple(spec.fields), ()),
            ("min_items", spec.min_items, 1),
            ("hint", spec.hint, None),
            ("required", spec.required, True),
            ("share", spec.share, None),
            ("entity", entity, None),
            ("sources", tuple(spec.sources), ()),
            ("has_constant", spec.has_constant, False),
            ("constant", spec.constant if spec.has_constant else None, None),
        ]),
        4,
        len(literal(spec.name)) + 3,
    )


def skill_meta(skill: ir.SkillProfile, contract: ir.Contract) -> Code:
    """SKILL: one field per line and one tool name per line, so adding a tool adds a line."""
    lines = [f"    key={literal(skill.skill_key)},", f"    name={literal(skill.skill_name)},"]
    for k, v in _kwargs([("mode", contract.mode, "REACT"), ("delegatable", contract.delegatable, False), ("target", contract.target, None)]):
        lines.append(f"    {k}={v},")
    if skill.tool_names:
        lines.append("    tool_names=(")
        lines += [f"        {literal(n)}," for n in skill.tool_names]
        lines.append("    ),")
    for k, v in _kwargs([("semantic_desc", skill.semantic_desc, ""), ("manual", skill.skill_manual, "")]):
        lines.append(f"    {k}={v},")
    return Code("rt.SkillMeta(\n" + "\n".join(lines) + "\n)")
