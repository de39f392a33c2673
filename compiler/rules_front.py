"""The front end of a contract's `rules`: each rule's texts parsed, type-checked and reported as
diagnostics whose caret stands inside the rule text (docs/reference/rules.md), and the plan
codegen compiles (`plan_rule`).
"""
from __future__ import annotations

import re

from skillc.compiler import ir
from skillc.compiler import rules_ast as A
from skillc.compiler import rules_types as T
from skillc.compiler.rules_names import CEL_FUNCTIONS, NAMESPACES, ROOTS
from skillc.compiler.diagnostics import Diagnostic, Severity, make
from skillc.compiler.rules_check import Checker, Env, Finding
from skillc.compiler.rules_fold import fixed_truth
from skillc.compiler.rules_syntax import RESERVED, RuleError, parse_rule_expr

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_CODE_OF_ERROR = {"syntax": "SC701", "unsupported": "SC702", "name": "SC703", "type": "SC704", "constant": "SC705"}


def rule_env(contract: ir.Contract, tool: ir.ToolContract, tool_names: list[str]) -> Env:
    """What the rules of `tool` see: its argument shapes, the inputs, and the response shapes of
    the skill's tools."""
    responses = {name: T.response_shape(t) for name, t in contract.tools.items()}
    return Env(args=T.args_shape(tool), inputs=T.inputs_shape(contract), responses=responses,
               tools=frozenset(tool_names) | frozenset(contract.tools))


# ---------------------------------------------------------------- positions


def _raw_offsets(raw: str) -> list[int]:
    """For a JSON string token (quotes included), the raw offset of each decoded character, plus
    one past the last: escapes make the two differ."""
    out: list[int] = []
    i = 1
    while i < len(raw) - 1:
        out.append(i)
        if raw[i] != "\\":
            i += 1
        elif raw[i + 1] == "u":
            code = int(raw[i + 2:i + 6], 16) if i + 6 <= len(raw) else 0
            i += 12 if 0xD800 <= code <= 0xDBFF and raw[i + 6:i + 8] == "\\u" else 6
        else:
            i += 2
    out.append(i)
    return out


def text_span(source: str, span: ir.Span | None, start: int, end: int) -> ir.Span | None:
    """The span, in the contract text, of characters start..end of the string value at `span`."""
    if span is None:
        return None
    raw = source[span.start:span.end] if span.end > span.start else ""
    if span.line != span.end_line or not raw.startswith('"'):
        return span
    offsets = _raw_offsets(raw)
    a = offsets[min(max(start, 0), len(offsets) - 1)]
    b = offsets[min(max(end, start + 1), len(offsets) - 1)]
    b = max(b, a + 1)
    return ir.Span(line=span.line, column=span.column + a, end_line=span.line, end_column=span.column + b,
                   start=span.start + a, end=span.start + b)


# ---------------------------------------------------------------- checking


class _RuleChecks:
    """Diagnostics for the rules of one contract."""

    def __init__(self, source: str, skill: str | None, file: str | None) -> None:
        self.source, self.skill, self.file = source, skill, file
        self.diags: list[Diagnostic] = []

    def d(self, code: str, message: str, span: ir.Span | None, help: str | None = None) -> None:
        severity: Severity = "error" if code in ("SC701", "SC702", "SC703", "SC704", "SC707", "SC710") else "warning"
        self.diags.append(make(code, severity, message, text=self.source, span=span, skill=self.skill, file=self.file,
                               help=help))

    def expr(self, where: str, text: str, span: ir.Span | None, env: Env, bound: dict[str, T.Type],
             want_bool: bool) -> tuple[A.Node | None, T.Type]:
        """Parse and check one text; report its findings at their place inside the text."""
        try:
            node = parse_rule_expr(text)
        except RuleError as exc:
            self.d(_CODE_OF_ERROR[exc.kind], f"{where}: {exc.message}", text_span(self.source, span, exc.start, exc.end))
            return None, T.DYN
        checker = Checker(env, text, bound)
        t = checker.check(node)
        if want_bool and t.kind not in ("bool", "dyn"):
            checker.findings.append(Finding("SC704", f"a rule must be a bool, this is {t}", *node.pos))
        for f in checker.findings:
            self.d(f.code, f"{where}: {f.message}", text_span(self.source, span, f.start, f.end), f.help)
        if any(f.severity == "error" for f in checker.findings):
            return None, t
        return node, t

    def rule(self, where: str, rule: ir.Rule, env: Env, seen: set[str]) -> None:
        sp = rule.prop_spans
        if rule.name is None:
            self.d("SC707", f"{where} has no name", rule.span)
        elif not _NAME.fullmatch(rule.name):
            self.d("SC707", f"{where}.name {rule.name!r} must be an identifier (letters, digits, _)", sp.get("name"))
        elif rule.name in seen:
            self.d("SC707", f"{where}: a second rule named '{rule.name}' on this tool", sp.get("name"))
        else:
            seen.add(rule.name)
        if rule.message is None:
            self.d("SC707", f"{where} has no message: say what is wrong and what to do next", rule.span)
        bound: dict[str, T.Type] = {}
        for let in rule.lets:
            taken = set(ROOTS) | set(NAMESPACES) | set(CEL_FUNCTIONS) | RESERVED | {"true", "false", "null", "in", "has"}
            if not _NAME.fullmatch(let.name) or let.name in taken:
                self.d("SC707", f"{where}.let: '{let.name}' cannot be a binding's name (an identifier that is not a "
                                "name a rule already sees)", let.key_span)
                continue
            if let.name in bound:
                self.d("SC707", f"{where}.let: '{let.name}' is bound twice", let.key_span)
            _, t = self.expr(f"{where}.let.{let.name}", let.text, let.span, env, bound, False)
            bound[let.name] = t
        if rule.when is not None:
            node, _ = self.expr(f"{where}.when", rule.when, sp.get("when"), env, bound, True)
            if node is not None and fixed_truth(node) is False:
                self.d("SC706", f"{where}.when is always false: the rule never applies",
                       text_span(self.source, sp.get("when"), *node.pos))
        if rule.expr is None:
            self.d("SC707", f"{where} has no expr", rule.span)
            return
        node, _ = self.expr(f"{where}.expr", rule.expr, sp.get("expr"), env, bound, True)
        if node is not None:
            fixed = fixed_truth(node)
            if fixed is not None:
                self.d("SC705", f"{where}.expr is always {'true' if fixed else 'false'}: it does not depend on the call",
                       text_span(self.source, sp.get("expr"), *node.pos),
                       help="a rule should read args, evidence or another value of the call")


def check_rules(contract: ir.Contract, profile: ir.SkillProfile, *, file: str | None = None) -> list[Diagnostic]:
    """The diagnostics of every rule of every tool of a contract."""
    checks = _RuleChecks(profile.skill_contract, profile.skill_key, file)
    for name, tool in contract.tools.items():
        if not tool.rules:
            continue
        env = rule_env(contract, tool, profile.tool_names)
        seen: set[str] = set()
        for i, rule in enumerate(tool.rules):
            checks.rule(f"tools.{name}.rules[{i}]", rule, env, seen)
    return checks.diags
