"""The MATCHES success operator at compile time (a skillc extension beside §6.1's operators):
its `value` must be a pattern of the language runtime/compiled/textpattern.py matches in linear time.
SC803 points at the fault inside the pattern's string when it can (a string written without
JSON escapes), else at the string."""
from __future__ import annotations

from skillc.compiler import ir
from skillc.compiler.diagnostics import Diagnostic, make
from skillc.runtime.compiled.textpattern import pattern_problem


def check_success_patterns(contract: ir.Contract, profile: ir.SkillProfile, *, file: str | None) -> list[Diagnostic]:
    """SC803 for a MATCHES rule whose value is not a string or not a supported pattern."""
    diags: list[Diagnostic] = []
    for tool in contract.tools.values():
        s = tool.success
        if s is None or s.op != "MATCHES":
            continue
        w = f"tools.{tool.name}.success"
        span = s.prop_spans.get("value") or s.prop_spans.get("op") or s.span
        if not isinstance(s.value, str) or not s.has_value:
            found = "nothing" if not s.has_value else type(s.value).__name__
            diags.append(make("SC803", "error", f"{w}.value must be a pattern (a string) for op MATCHES, found {found}",
                              text=profile.skill_contract, span=span, skill=profile.skill_key, file=file))
            continue
        problem = pattern_problem(s.value)
        if problem is None:
            continue
        why, column = problem
        diags.append(make("SC803", "error", f"{w}.value: pattern {s.value!r} at column {column}: {why}",
                          text=profile.skill_contract, span=_at(profile.skill_contract, span, s.value, column),
                          skill=profile.skill_key, file=file,
                          help="MATCHES patterns: literals, . [] \\d \\w \\s, ^ $, ( ) (?: ) |, * + ? {m,n}, "
                               "a leading (?i) (docs/reference/contract.md §6.1)"))
    return diags


def _at(text: str, span: ir.Span | None, pattern: str, column: int) -> ir.Span | None:
    """The character `column` of the pattern inside its JSON string token, when the token holds
    the pattern verbatim (no escapes) on one line; else the whole token."""
    if span is None or span.line != span.end_line or text[span.start:span.end] != f'"{pattern}"':
        return span
    col = span.column + column  # the opening quote takes one column
    return ir.Span(line=span.line, column=col, end_line=span.line, end_column=col + 1,
                   start=span.start + column, end=span.start + column + 1)
