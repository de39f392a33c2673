"""The views the skill module template renders: one per tool, input and output, and the skill's
metadata (an argument's view is `codegen_args`, names and call snippets `codegen_names`).

Every generated name derives from what it denotes (`ident`: a tool name, an argument path, an
issue kind), never from a position; every value is a literal made by `codegen_literals` (`literal`,
`comment`). A metadata field at its default is left out of the module (`changed_kwargs`).
"""
from __future__ import annotations

from typing import Any, Sequence

from skillc.compiler import ir
from skillc.compiler.codegen_literals import Code, comment, expr_code, literal, parts_of
from skillc.compiler.codegen_args import ArgView, arg_view
from skillc.compiler.codegen_names import Names, call_code, changed_kwargs, ident, names_note, reviewer_note
from skillc.compiler.codegen_rules import plan_rule, rule_view

__all__ = ["Names", "ident", "input_view", "output_meta", "skill_meta", "tool_view"]

_OPS = {
    "EQ": "rt.op_eq({a}, {v})",
    "NE": "rt.op_ne({a}, {v})",
    "IN": "rt.op_in({a}, {v})",
    "NOT_IN": "rt.op_not_in({a}, {v})",
    "TRUTHY": "rt.op_truthy({a})",
    "EXISTS": "rt.op_exists({a})",
    "MATCHES": "rt.op_matches({a}, {v})",
}


def _tool_note(tool: ir.ToolContract) -> Code:
    """The line under a tool's header: what the tool may do, in the spec's words."""
    if tool.side_effect != "WRITE":
        return reviewer_note("read only (sideEffect NONE)")
    bits: list[str | Code] = ["WRITE (§14):", "approval before the call;" if tool.effective_confirm else "NO approval (confirm false);"]
    if tool.idempotency_key:
        bits += ["idempotency key", names_note(p.text for p in tool.idempotency_key) + ";"]
    else:
        bits.append("no idempotency key;")
    bits += ["verified by", comment(tool.verify.tool), "(§6.4)"] if tool.verify and tool.verify.tool else ["no verify (§6.4)"]
    return reviewer_note(*bits)


def _success_note(tool: ir.ToolContract) -> Code:
    s = tool.success
    if s is None:
        return reviewer_note("no success rule: every response is a business success (§6.1)")
    if s.op is None:
        return reviewer_note("success (§6.1): any non-empty response")
    path = comment(s.path.text if s.path else "")
    value = "" if s.op in ("TRUTHY", "EXISTS") else comment(s.value if s.has_value else None)
    return reviewer_note("success (§6.1):", path, s.op, value)


def tool_view(names: Names, tool: ir.ToolContract, contract: ir.Contract | None = None) -> dict[str, Any]:
    """What the skill module template renders for one tool: its argument checks with their
    constants, the success judgement, error paths, extracts, verify arguments and TOOLS record
    (`contract`: where typed evidence fields are resolved)."""
    fn = names.make(("tool", tool.name), ident(tool.name))
    consts: list[Code] = []
    args = [arg_view(names, tool.name, param, arg, consts, contract) for param, arg in tool.args.items()]
    err = tool.error
    verify = _verify_view(tool.verify)
    has_bind = any(a.bind_kind for a in args)
    rules = [rule_view(names.make(("rule", tool.name, r.name), ident(tool.name), "rule", ident(r.name or "")),
                       plan_rule(r)) for r in tool.rules]
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
        "rules": rules,
        "meta": _tool_meta(tool, fn, args, has_bind, verify, rules),
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
                "note": reviewer_note(comment(key), "at", comment(path_text)) if ex.key else comment(key),
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


def _tool_meta(tool: ir.ToolContract, fn: Code, args: list[ArgView], has_bind: bool,
               verify: dict[str, Any] | None, rules: list[dict[str, Any]]) -> list[tuple[Code, Code]]:
    """The keywords of the tool's rt.ToolMeta record: fields off their default, every argument's
    ArgMeta, and the generated functions the tool has (bind, check, judge, extract, verify_args)."""
    idem = tuple(parts_of(p.parts) for p in tool.idempotency_key)
    fns = [("bind", has_bind), ("check", bool(args)), ("judge", tool.success is not None), ("extract", bool(tool.extracts)),
           ("verify_args", verify is not None)]
    meta = [
        ("name", literal(tool.name)),
        *changed_kwargs([
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
    if rules:
        meta.append(("rules", Code("(\n" + "".join(f"        {r['meta']},\n" for r in rules) + "    )")))
    meta += _tool_facts(tool, args)
    return [(Code(k), v) for k, v in meta]


def _tool_facts(tool: ir.ToolContract, args: list[ArgView]) -> list[tuple[str, Code]]:
    """What the chain reads of the tool besides its decisions, stated here so that the runtime
    works nothing out per call: the sensitive arguments' paths (masked in the trace), the
    top-level names bound by from/const (exempt from the schema's required check) and the rules'
    names. ToolMeta derives the same from its records when a module leaves them out."""
    bound = (str(a.path[0][1]) for a in args if a.bound and a.path and len(a.path[0]) > 1)
    return changed_kwargs([
        ("sensitive_paths", tuple(a.path for a in args if a.sensitive), ()),
        ("bound_names", tuple(dict.fromkeys(bound)), ()),
        ("rule_names", tuple(r.name or "" for r in tool.rules), ()),
    ])


def _entity_literal(e: ir.Entity) -> Code:
    return call_code("rt.EntitySpec", changed_kwargs([("id", e.id, "id"), ("name", e.name, "name"), ("scalar", e.scalar, None),
                                          ("keyed", e.keyed, False)]), 0,
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
    meta = call_code(
        "rt.InputMeta",
        [("name", literal(spec.name))] + changed_kwargs([
            ("required", spec.required, True),
            ("provider", spec.provider, None),
            ("prefix", prefix, None),
            ("share_key", share_key, None),
        ]),
        4,
        len(literal(spec.name)) + 3,
    )
    note = reviewer_note(comment(spec.name), "from", comment(expr.text)) if expr is not None else reviewer_note(comment(spec.name), "from upstream output")
    return {"name": literal(spec.name), "note": note, "code": code, "source": literal(source), "meta": meta}


def output_meta(spec: ir.OutputSpec) -> Code:
    entity = _entity_literal(spec.entity) if spec.entity is not None and spec.entity.type is not None else None
    return call_code(
        "rt.OutputMeta",
        [("name", literal(spec.name))] + changed_kwargs([
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
    for k, v in changed_kwargs([("mode", contract.mode, "REACT"), ("delegatable", contract.delegatable, False), ("target", contract.target, None)]):
        lines.append(f"    {k}={v},")
    if skill.tool_names:
        lines.append("    tool_names=(")
        lines += [f"        {literal(n)}," for n in skill.tool_names]
        lines.append("    ),")
    for k, v in changed_kwargs([("semantic_desc", skill.semantic_desc, ""), ("manual", skill.skill_manual, "")]):
        lines.append(f"    {k}={v},")
    return Code("rt.SkillMeta(\n" + "\n".join(lines) + "\n)")
