"""`skillc check --servers`: a contract's arguments against the input schemas its MCP servers
list. A contract argument the schema does not have (SC606) guards nothing, and the property it
was meant to fill is left to a model told the runtime fills it; a property the schema requires
whose every value the contract refuses (SC607) makes every call fail. Both are found here,
before a call fails at run time with ARG_REJECTED."""
from __future__ import annotations

from typing import Any

# sources that never match a model's value without from/const (§5.3)
_NEVER_MATCH = frozenset({"PLATFORM", "CONTRACT"})


def _properties(schema: Any) -> tuple[set[str], list[str]] | None:
    """(property names, required names) of an object schema that lists its properties, or None
    when the schema says nothing checkable (no properties, or a schema of another shape)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict) or not schema["properties"]:
        return None
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    return set(schema["properties"]), required


def _top(arg: Any) -> str | None:
    first = arg.path.parts[0] if arg.path.parts else None
    return first.name if first is not None and first.kind == "key" else None


def _refused(arg: Any) -> bool:
    """The contract refuses every value of the argument and binds none."""
    return arg.from_ is None and not arg.has_const and set(arg.sources) <= _NEVER_MATCH


def schema_findings(result: Any, served: dict[str, Any]) -> list[Any]:
    """SC606 / SC607 of every loadable skill's tools against the served tools' input schemas
    (`served`: tool name -> `ListedTool`)."""
    from skillc.compiler.authoring import did_you_mean
    from skillc.compiler.diagnostics import make

    out = []
    for profile in result.studio.skills:
        contract = result.contracts.get(profile.skill_key)
        if profile.status != "ACTIVE" or contract is None:
            continue
        file = profile.source.contract_file if profile.source else None
        where = {"text": profile.skill_contract, "skill": profile.skill_key, "file": file}
        for name, tool in sorted(contract.tools.items()):
            listed = served.get(name)
            shape = _properties(listed.input_schema) if listed is not None else None
            if listed is None or shape is None:
                continue
            properties, required = shape
            by_name = {_top(a): a for a in tool.args.values() if _top(a) is not None}
            unfilled = [r for r in required if r not in by_name]
            for top, arg in by_name.items():
                if top in properties:
                    continue
                # a close name, else the one required property nothing of the contract names
                close = did_you_mean(str(top), sorted(properties)) or (
                    f"did you mean {unfilled[0]!r}?" if len(unfilled) == 1 else None)
                left = [r for r in unfilled if close == f"did you mean {r!r}?"] or unfilled[:1]
                tail = (f", and the required {left[0]!r} is left to the model, told that the runtime fills it"
                        if left and (arg.from_ is not None or arg.has_const) else
                        f", and it does not govern the required {left[0]!r}" if left else "")
                out.append(make("SC606", "warning", f"argument {top!r} of tool {name!r} is not in the tool's "
                                f"inputSchema (server {listed.server} takes: {', '.join(sorted(properties))}): "
                                f"its rule guards nothing{tail}", span=arg.key_span, help=close, **where))
            for req in required:
                arg = by_name.get(req)
                if arg is not None and _refused(arg):
                    out.append(make("SC607", "warning", f"tool {name!r} requires {req!r} (the inputSchema of "
                                    f"server {listed.server}), but the contract refuses every value of it and binds none: no "
                                    f"call of {name} can pass", span=arg.key_span, **where))
    return out
