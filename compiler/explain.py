"""`skillc explain`: a skill's contract told in words, per tool and argument, plus static checks.

For each argument: how its value is bound (§5.2, §5.4), which sources are legal (§5.3), what happens
when it is missing (§5.5). The checks are ones §16 leaves to the author: a required argument no
configured source can ever satisfy (its value is always refused), `from` + `sources: ["USER"]`
without MODEL (asks again and again, §5.3), and `missing.tool` / `verify.tool` / `target` outside
toolNames.
"""
from __future__ import annotations

from typing import Protocol

from skillc.compiler import ir
from skillc.compiler.diagnostics import Diagnostic, make

UNSATISFIABLE = "SC411"
USER_LOOP = "SC412"
MISSING_TOOL_OUTSIDE = "SC413"
VERIFY_TOOL_OUTSIDE = "SC414"
TARGET_OUTSIDE = "SC415"

_MATCHABLE = ("USER", "EVIDENCE", "NODE_OUTPUT", "SHARED", "SESSION", "PRIOR_TASK", "MODEL")
_SOURCE_WORDS = {
    "USER": "the user said it (a follow-up answer, or a recent user message contains it)",
    "EVIDENCE": "equal to a value extracted from successful evidence",
    "NODE_OUTPUT": "found under the parameter path in the node's inputs/outputs",
    "SHARED": "found under the parameter path in task-shared values",
    "SESSION": "found under the parameter path in session-shared values",
    "PRIOR_TASK": "the id of an entity from earlier tasks",
    "MODEL": "whatever the model wrote",
    "PLATFORM": "never matches (only from: platform.*)",
    "CONTRACT": "never matches (only const)",
}


def _binding(arg: ir.ArgContract) -> str:
    if arg.has_const:
        return f"always the constant {arg.const!r} (source CONTRACT)"
    if arg.from_ is not None:
        source = ir.SOURCE_OF_PREFIX.get(arg.from_.kind, "NODE_OUTPUT")
        when = " only when the candidate is unique (when: UNIQUE)" if arg.when == "UNIQUE" else ""
        text = f"from {arg.from_.text!r}{when}, overwriting the model's value (source {source})"
        if "[]" in arg.path.text and "[]" in arg.from_.text and arg.from_.kind != "evidence":
            text += "; array template: fills items the model left empty"
        return text + "; if nothing is found the model's value counts as MODEL"
    return "not bound: the model fills it"


def _missing(arg: ir.ArgContract) -> str:
    if not arg.required:
        return "not required: the call goes ahead without it"
    m = arg.missing
    if m.action == "ASK_USER":
        return "ASK_USER: the call is refused and the model must ask the user (PARAM_PROVENANCE_ASK_USER)"
    if m.action == "CALL_TOOL":
        if not m.tool:
            return "CALL_TOOL without a tool: the call goes ahead without it (§5.5)"
        return f"CALL_TOOL: the call is refused until {m.tool!r} is called (PARAM_PROVENANCE_CALL_TOOL)"
    msg = f" with message {m.message!r}" if m.message else ""
    return f"FAIL: the call is refused and the node should fail{msg} (PARAM_PROVENANCE_FAIL)"


def _legal(arg: ir.ArgContract) -> str:
    if arg.has_const or arg.from_ is not None:
        bound = "the bound value"
        if "MODEL" in arg.sources:
            return bound + "; if binding finds nothing, the model's value (MODEL)"
        if "USER" in arg.sources:
            return bound + "; if binding finds nothing, the user is asked"
        return bound + " only; if binding finds nothing, the model's value is rejected"
    if not arg.sources:
        return "none: any value the model writes is rejected (PARAM_PROVENANCE_REJECTED)"
    return "; ".join(f"{s}: {_SOURCE_WORDS.get(s, s)}" for s in arg.sources)


def explain(skill: ir.SkillProfile, contract: ir.Contract) -> tuple[list[str], list[Diagnostic]]:
    """Lines describing `skill`'s contract, and the static-check warnings."""
    file = skill.source.contract_file if skill.source else None
    text = skill.skill_contract
    diags: list[Diagnostic] = []

    def warn(code: str, message: str, node: ir.Node, help: str | None = None) -> None:
        diags.append(make(code, "warning", message, text=text, span=node.span or node.key_span, skill=skill.skill_key, file=file, help=help))

    names = set(skill.tool_names)
    lines = [_head(skill, contract, names, warn)]
    for name in sorted(contract.tools):
        lines += _tool_lines(name, contract.tools[name], names, warn)
    for name, spec in contract.inputs.items():
        src = spec.from_.text if spec.from_ is not None else f"the nearest upstream's output {name!r}"
        provider = f", provider {spec.provider}" if spec.provider else ""
        lines.append(f"input {name}: {src}{provider}{'' if spec.required else ' (optional)'}")
    for name, out in contract.outputs.items():
        share = f", shared {out.share}" if out.share else ""
        lines.append(f"output {name}: {out.type}{share}{'' if out.required else ' (optional)'}")
    return lines, diags


class _Warn(Protocol):
    """`explain`'s warning sink: a diagnostic at `node` of the skill's contract."""

    def __call__(self, code: str, message: str, node: ir.Node, help: str | None = None) -> None: ...


def _head(skill: ir.SkillProfile, contract: ir.Contract, names: set[str], warn: _Warn) -> str:
    """The first line: the skill's key, mode, delegatable and target (warned when outside toolNames)."""
    head = f"skill {skill.skill_key} ({contract.mode}"
    if contract.delegatable:
        head += ", delegatable"
    if contract.target:
        head += f", target {contract.target}"
        if contract.target not in names:
            warn(TARGET_OUTSIDE, f"target {contract.target!r} is not in toolNames: the runtime treats it as unset (§10.1)", contract)
    return head + ")"


def _tool_lines(name: str, tool: ir.ToolContract, names: set[str], warn: _Warn) -> list[str]:
    """One tool: its flags, idempotency key, arguments, success rule, extracts and verify."""
    flags: list[str] = [tool.side_effect]
    if tool.effective_confirm:
        flags.append("confirm")
    if name not in names:
        flags.append("not in toolNames: never callable")
    lines = [f"tool {name} [{', '.join(flags)}]" + (f" label {tool.label!r}" if tool.label else "")]
    if tool.idempotency_key:
        lines.append(f"  idempotency key: {', '.join(p.text for p in tool.idempotency_key)}")
    for param, arg in tool.args.items():
        lines += _arg_lines(param, arg)
        _check_arg(name, param, arg, names, warn)
    lines.append(_success_line(tool.success))
    for ex in tool.extracts:
        key = ex.key or (ex.path.text if ex.path else "")
        entity = f", entity {ex.entity.type}" if ex.entity and ex.entity.type else ""
        lines.append(f"  extract {key}: {ex.path.text if ex.path else ''}{entity}")
    if tool.rules:
        from skillc.compiler.rules_words import rule_in_words  # lark's rule grammar only when used

        lines.append("  rules (every one must hold, or the call is refused; judged again at CONFIRM):")
        for rule in tool.rules:
            lines += ["  " + line for line in rule_in_words(rule)]
    if tool.verify is not None:
        lines.append(f"  verify with {tool.verify.tool!r}" + ("" if tool.verify.args else " (the whole request)"))
        if tool.verify.tool and tool.verify.tool not in names:
            warn(VERIFY_TOOL_OUTSIDE, f"tool {name!r}: verify.tool {tool.verify.tool!r} is not in toolNames", tool.verify)
    return lines


def _arg_lines(param: str, arg: ir.ArgContract) -> list[str]:
    """One argument: how it is bound, its legal sources, what happens when it is missing, its enum."""
    label = f" ({arg.label!r})" if arg.label else ""
    lines = [
        f"  arg {param}{label}{' [sensitive]' if arg.sensitive else ''}",
        f"    bound: {_binding(arg)}",
        f"    legal sources: {_legal(arg)}",
        f"    when missing: {_missing(arg)}",
    ]
    if arg.enum:
        lines.append(f"    enum: {arg.enum!r} (another value: the user is asked)")
    return lines


def _check_arg(tool: str, param: str, arg: ir.ArgContract, names: set[str], warn: _Warn) -> None:
    """The static checks on one argument §16 leaves to the author: unsatisfiable, asks the user
    again and again, or a missing.tool outside toolNames (or the tool itself)."""
    bound = arg.has_const or arg.from_ is not None
    if arg.required and not bound and not any(s in _MATCHABLE for s in arg.sources):
        warn(UNSATISFIABLE, f"tool {tool!r}: required argument {param!r} has no source that can ever be satisfied: every call is refused",
             arg, help='add a from/const, or sources such as ["USER"], ["EVIDENCE"] or ["MODEL"]')
    if arg.from_ is not None and "USER" in arg.sources and "MODEL" not in arg.sources:
        warn(USER_LOOP, f"tool {tool!r}: argument {param!r} has from + sources [\"USER\"] without MODEL: when binding fails the user is asked again and again (§5.3)", arg)
    m = arg.missing
    if arg.required and m.action == "CALL_TOOL" and m.tool and (m.tool not in names or m.tool == tool):
        why = "is the tool itself" if m.tool == tool else "is not in toolNames"
        warn(MISSING_TOOL_OUTSIDE, f"tool {tool!r}: argument {param!r}: missing.tool {m.tool!r} {why}", m)


def _success_line(success: ir.Success | None) -> str:
    """The tool's success rule (§6.1), or what happens without one."""
    if success is not None and success.op is not None:
        path = success.path.text if success.path else "(the response)"
        value = f" {success.value!r}" if success.has_value else ""
        return f"  success: {path} {success.op}{value}"
    if success is not None:
        return "  success: configured without op (no condition; an empty response still fails)"
    return "  success: not configured (no business judgement)"
