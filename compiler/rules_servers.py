"""`skillc check --servers` for rules: a rule that reads `args.X` where the tool's MCP inputSchema
has no property X and the contract binds none (SC711) reads a value the model is never asked
for, and one that reads an evidence field no answer of the tool has by its MCP outputSchema
(SC712, compiler/rules_outputs.py) reads a value never there: either rule is undecidable on every
call. Each points at the read inside the rule text."""
from __future__ import annotations

from typing import Any, Iterator

from skillc.compiler import ir
from skillc.compiler import rules_ast as A
from skillc.compiler.diagnostics import Diagnostic, make
from skillc.compiler.rules_front import text_span
from skillc.compiler.rules_outputs import OutputReads, Shape, inline_refs, origin_fields
from skillc.compiler.rules_syntax import RuleError, parse_rule_expr


def _arg_reads(node: A.Node, bound: frozenset[str] = frozenset()) -> Iterator[tuple[str, A.Node]]:
    """(top-level argument name, the node reading it) for every `args.X` / `args['X']`."""
    if isinstance(node, (A.Select, A.Index)) and isinstance(node.operand, A.Ident) and node.operand.name == "args" \
            and "args" not in bound:
        if isinstance(node, A.Select):
            yield node.field, node
        elif isinstance(node.index, A.Lit) and node.index.kind == "string":
            yield node.index.value, node
    inner = bound | {node.var} if isinstance(node, A.Macro) else bound
    for child in A.children(node):
        yield from _arg_reads(child, inner if child is not getattr(node, "target", None) else bound)


def _texts(rule: ir.Rule) -> Iterator[tuple[str, str, ir.Span | None]]:
    """(which, text, span of its string) for the rule's expr, guard and bindings."""
    if rule.expr is not None:
        yield "expr", rule.expr, rule.prop_spans.get("expr")
    if rule.when is not None:
        yield "when", rule.when, rule.prop_spans.get("when")
    for let in rule.lets:
        yield f"let.{let.name}", let.text, let.span


def _contract_tools(result: Any) -> Iterator[tuple[Any, str | None, str, ir.ToolContract]]:
    """(skill profile, its contract file, tool name, tool contract) for every loaded contract."""
    for profile in result.studio.skills:
        contract = result.contracts.get(profile.skill_key)
        if contract is None:
            continue
        file = profile.source.contract_file if profile.source else None
        for name, tool in contract.tools.items():
            yield profile, file, name, tool


def rule_schema_findings(result: Any, served: dict[str, Any]) -> list[Diagnostic]:
    """SC711 for every loadable skill's rules against the served tools' input schemas, SC712
    against their output schemas (`served`: tool name -> a listed tool with `input_schema` and
    `output_schema`)."""
    return _input_findings(result, served) + _output_findings(result, served)


def _output_findings(result: Any, served: dict[str, Any]) -> list[Diagnostic]:
    """SC712: evidence fields rules read that no answer of the tool has (by its outputSchema)."""
    outputs = {name: inline_refs(schema) if isinstance(schema := getattr(t, "output_schema", None), dict) else None
               for name, t in served.items()}
    if not any(isinstance(s, dict) for s in outputs.values()):
        return []
    origin = origin_fields(outputs)
    out: list[Diagnostic] = []
    for profile, file, name, tool in _contract_tools(result):
        for i, rule in enumerate(tool.rules):
            env: dict[str, Shape | None] = {}
            texts = list(_texts(rule))
            lets = [t for t in texts if t[0].startswith("let.")]
            for which, text, span in lets + [t for t in texts if not t[0].startswith("let.")]:
                try:
                    node = parse_rule_expr(text)
                except RuleError:
                    continue  # reported by the front end
                reads = OutputReads(outputs, origin)
                found = reads.shape(node, env)
                if which.startswith("let."):
                    env[which[4:]] = found
                for miss in reads.unread:
                    shape = miss.shape
                    if shape.tool is None:
                        said = (f"no object in the served tools' outputSchemas has a field '{miss.field}', so "
                                f"{shape.path} never has it")
                    else:
                        said = (f"{shape.path} has no field '{miss.field}' in the outputSchema of {shape.tool}, "
                                f"which allows no other: no answer of {shape.tool} has it")
                    known = ", ".join(miss.known[:24]) + (", …" if len(miss.known) > 24 else "")
                    out.append(make("SC712", "warning", f"tools.{name}.rules[{i}].{which}: {said}, so the rule "
                                    "cannot be decided on any call", text=profile.skill_contract,
                                    span=text_span(profile.skill_contract, span, *miss.node.pos),
                                    skill=profile.skill_key, file=file, help=f"fields there are {known}"))
    return out


def _input_findings(result: Any, served: dict[str, Any]) -> list[Diagnostic]:
    """SC711: arguments rules read that the tool's inputSchema does not have."""
    out: list[Diagnostic] = []
    for profile, file, name, tool in _contract_tools(result):
        schema = getattr(served.get(name), "input_schema", None)
        props = schema.get("properties") if isinstance(schema, dict) else None
        if not tool.rules or not isinstance(props, dict) or not props:
            continue
        bound = {a.path.parts[0].name for a in tool.args.values()
                 if (a.has_const or a.from_ is not None) and a.path.parts and a.path.parts[0].kind == "key"}
        for i, rule in enumerate(tool.rules):
            for which, text, span in _texts(rule):
                try:
                    node = parse_rule_expr(text)
                except RuleError:
                    continue  # reported by the front end
                for arg, reader in _arg_reads(node):
                    if arg in props or arg in bound:
                        continue
                    out.append(make("SC711", "warning", f"tools.{name}.rules[{i}].{which}: the inputSchema of "
                                    f"{name} has no property '{arg}' and the contract binds none: the model never "
                                    "sends it, so the rule cannot be decided on any call", text=profile.skill_contract,
                                    span=text_span(profile.skill_contract, span, *reader.pos),
                                    skill=profile.skill_key, file=file,
                                    help=f"properties are {', '.join(sorted(props))}"))
    return out
