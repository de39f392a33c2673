"""Compiler diagnostics: a stable code, a severity, a message and a caret excerpt of the source.

Positions are 1-based and refer to the contract's own text (for a SQLite or inline source, the
line/column inside the `skill_contract` value). Every code is listed in docs/diagnostics.md.
"""
from __future__ import annotations

import unicodedata
from typing import Literal

from pydantic import BaseModel

from skillc.compiler import ir

Severity = Literal["error", "warning", "note"]


class Diagnostic(BaseModel):
    """One finding of the front end, like a compiler's: `file:line:col: error[SC106]: message`."""

    code: str
    severity: Severity
    message: str
    skill: str | None = None
    file: str | None = None
    line: int = 1
    column: int = 1
    end_line: int = 1
    end_column: int = 1
    excerpt: str = ""
    help: str | None = None

    @property
    def is_error(self) -> bool:
        """True for severity "error" (the skill is dropped at load, §16)."""
        return self.severity == "error"


def _display_width(text: str) -> int:
    """Terminal columns of `text`: wide (CJK) characters take two, so carets line up."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def make_excerpt(text: str, line: int, column: int, end_line: int, end_column: int) -> str:
    """The source line of (line, column) and a caret line under the span (to its line's end)."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    src = lines[line - 1].rstrip("\r")
    start = max(column - 1, 0)
    stop = end_column - 1 if end_line == line else len(src)
    stop = max(min(stop, len(src)), start + 1)
    # Keep tabs as tabs so the caret sits under the same character whatever the tab width.
    indent = "".join(ch if ch == "\t" else " " * _display_width(ch) for ch in src[:start])
    width = max(_display_width(src[start:stop]), 1)
    return f"{src}\n{indent}^{'~' * (width - 1)}"


def make(
    code: str,
    severity: Severity,
    message: str,
    *,
    text: str | None,
    span: ir.Span | None,
    skill: str | None,
    file: str | None,
    help: str | None = None,
) -> Diagnostic:
    """Build a diagnostic at `span` of `text` (line 1 column 1 when the span is unknown)."""
    if span is None:
        line = column = end_line = 1
        end_column = 2
    else:
        line, column, end_line, end_column = span.line, span.column, span.end_line, span.end_column
    excerpt = make_excerpt(text, line, column, end_line, end_column) if text else ""
    return Diagnostic(
        code=code,
        severity=severity,
        message=message,
        skill=skill,
        file=file,
        line=line,
        column=column,
        end_line=end_line,
        end_column=end_column,
        excerpt=excerpt,
        help=help,
    )


def render(d: Diagnostic) -> str:
    """Compiler-style text: `file:line:col: error[SC106]: message`, the excerpt, then any help."""
    where = d.file or (f"<{d.skill}>" if d.skill else "<contract>")
    head = f"{where}:{d.line}:{d.column}: {d.severity}[{d.code}]: {d.message}"
    if d.skill and not d.file:
        head += f" (skill {d.skill})"
    out = [head]
    if d.excerpt:
        gutter = str(d.line)
        src, _, carets = d.excerpt.partition("\n")
        out.append(f" {gutter} | {src}")
        out.append(f" {' ' * len(gutter)} | {carets}")
    if d.help:
        out.append(f"  = help: {d.help}")
    return "\n".join(out)


def count(diagnostics: list[Diagnostic]) -> dict[str, int]:
    """How many errors, warnings and notes."""
    totals = {"error": 0, "warning": 0, "note": 0}
    for d in diagnostics:
        totals[d.severity] += 1
    return totals
