"""Compiler diagnostics: a stable code, a severity, a message and a caret excerpt of the source.

Positions are 1-based and refer to the contract's own text (for a SQLite or inline source, the
line/column inside the `skill_contract` value). Every code is listed in docs/diagnostics.md.
"""
from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel

from skillc.compiler import ir
from skillc.runtime.text.border import clean_text, has_surrogate

Severity = Literal["error", "warning", "note"]

# Every code the compiler and `skillc check` emit, with its one severity and a one-line summary.
# docs/diagnostics.md lists exactly this table (a test compares them); `make` refuses codes that
# are not here and severities that differ, so a new code is documented before it can be used.
CODES: dict[str, tuple[Severity, str]] = {
    "SC001": ("note", "unknown contract property, ignored (§19)"),
    "SC002": ("warning", "duplicate key in an object; the last one wins"),
    "SC003": ("warning", "const/constant mix-up (§19)"),
    "SC004": ("warning", "unknown contract property that looks like a misspelled rule-carrying one (the rule is lost)"),
    "SC101": ("error", "§16 rule 1: skill_contract empty, not JSON, or not an object"),
    "SC102": ("error", "§16 rule 2: unknown from prefix"),
    "SC103": ("error", "§16 rule 3: target is not a WRITE tool of tools"),
    "SC104": ("error", "§16 rule 4: delegatable with a WRITE tool"),
    "SC105": ("error", "§16 rule 5: empty tools key"),
    "SC106": ("error", "§16 rule 6: WRITE tool without success"),
    "SC107": ("error", "§16 rule 7: confirm: true on a tool that is not WRITE"),
    "SC108": ("error", "§16 rule 8: verify.tool empty, not in tools, or not NONE"),
    "SC109": ("error", "§16 rule 9: from and const together"),
    "SC110": ("error", "§16 rule 10: platform field not open"),
    "SC111": ("error", "§16 rule 11: extracts item without path"),
    "SC112": ("error", "§16 rule 12: LIST output without fields"),
    "SC113": ("error", "§16 rule 13: illegal enum value (case-sensitive)"),
    "SC114": ("error", "a property of the wrong JSON type (the contract cannot be read, rule 1)"),
    "SC115": ("error", "a malformed expression or path (the contract cannot be read)"),
    "SC116": ("error", "call.<path> outside verify.args (the contract cannot be read)"),
    "SC117": ("warning", "output key equal to a platform field name; writing it is refused at run time"),
    "SC118": ("warning", "verify.args entry that is neither const nor from: call.<path>; left out of the verify call"),
    "SC201": ("warning", "target not in toolNames"),
    "SC202": ("warning", "missing.tool not in toolNames"),
    "SC203": ("warning", "verify.tool not in toolNames"),
    "SC204": ("warning", "idempotencyKey path not listed in args"),
    "SC205": ("warning", "verify.args call.<path> not listed in the write tool's args"),
    "SC206": ("warning", "success without op"),
    "SC207": ("warning", "listed parameter with no satisfiable source"),
    "SC208": ("warning", "from + sources [USER] without MODEL"),
    "SC209": ("warning", "parameter named like a platform field without from: platform.*"),
    "SC210": ("warning", "missing.tool is the parameter's own tool"),
    "SC211": ("warning", "missing CALL_TOOL without tool"),
    "SC212": ("warning", "inputs provider is the skill itself"),
    "SC213": ("note", "toolNames tool without a contract"),
    "SC214": ("note", "confirm: false needs state.write-confirm-bypass-tools too"),
    "SC215": ("warning", "when without from"),
    "SC216": ("warning", "contract tool not in toolNames: never callable"),
    "SC301": ("warning", "agent bound to an unknown skill"),
    "SC302": ("warning", "agent with no loadable skill"),
    "SC401": ("warning", "inputs.provider names an unknown skill"),
    "SC402": ("warning", "inputs.provider names another agent's skill"),
    "SC403": ("warning", "inputs.provider names the skill itself"),
    "SC404": ("warning", "providers form a cycle"),
    "SC411": ("warning", "(explain) required argument no source can satisfy"),
    "SC412": ("warning", "(explain) from + USER without MODEL"),
    "SC413": ("warning", "(explain) missing.tool outside toolNames"),
    "SC414": ("warning", "(explain) verify.tool outside toolNames"),
    "SC415": ("warning", "(explain) target outside toolNames"),
    "SC490": ("error", "code generation failed for a non-JSON value"),
    "SC501": ("warning", "unknown key in an agent or skill YAML file"),
    "SC502": ("error", "wrong type of a value in an agent or skill YAML file"),
    "SC503": ("warning", "status ACTIVE in another case: the record does not load"),
    "SC504": ("warning", "skill without a manual"),
    "SC505": ("warning", "skill.yaml field shadowed by the file beside it, or skill_key unlike the folder"),
    "SC506": ("error", "studio text the border refuses (lone surrogate, not UTF-8, too long, too deep): the record is unreadable and dropped"),
    "SC507": ("error", "a skill.yaml or agent file that is not a YAML mapping: that record is unreadable and dropped"),
    "SC601": ("warning", "(check --servers) a toolName no configured MCP server serves"),
    "SC602": ("warning", "(check --servers) a contract READ whose MCP tool says destructiveHint"),
    "SC603": ("note", "(check --servers) a contract WRITE whose MCP tool says readOnlyHint"),
    "SC604": ("warning", "(check --servers) an MCP server that could not be listed"),
    "SC605": ("error", "(check --servers) two MCP servers list the same tool name: serve refuses to start"),
    "SC606": ("warning", "(check --servers) a contract argument that is not in the tool's inputSchema"),
    "SC607": ("warning", "(check --servers) a property the tool's inputSchema requires that the contract refuses"),
    "SC701": ("error", "(rules) a rule expression that does not parse"),
    "SC702": ("error", "(rules) a CEL feature skillc's rule language does not support"),
    "SC703": ("error", "(rules) an unknown name, function or field in a rule"),
    "SC704": ("error", "(rules) a rule expression of the wrong type (no such operator, not a bool)"),
    "SC705": ("warning", "(rules) a rule that is always true or always false"),
    "SC706": ("warning", "(rules) a rule guard (when) that never applies"),
    "SC707": ("error", "(rules) a rule entry without name, expr or message, a repeated name, or a bad let name"),
    "SC708": ("warning", "(rules) a rule reads an argument the contract does not list"),
    "SC709": ("warning", "(rules) a rule reads evidence of a tool this skill does not call"),
    "SC710": ("error", "(rules) a matches() pattern outside the linear-time pattern language"),
    "SC711": ("warning", "(check --servers) a rule reads an argument the tool's inputSchema does not have"),
    "SC712": ("warning", "(check --servers) a rule reads an evidence field the tool's outputSchema never has"),
    "SC801": ("error", "(typed evidence) an args evidence field that names nothing the contract extracts"),
    "SC802": ("warning", "(typed evidence) args evidence without EVIDENCE among the sources: no effect"),
    "SC803": ("error", "(MATCHES) a success pattern that is not a string or not in the supported pattern language"),
    "SC900": ("error", "internal error of the front end on this skill"),
}


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


EXCERPT_CONTEXT = 80
"""Characters shown on each side of a span in an excerpt: a line longer than the span and twice
this is cut to that window (with "…"), so each diagnostic costs the same whatever the line's
length, and a one-line contract with thousands of problems is diagnosed in linear time."""
EXCERPT_SPAN = 160  # characters of the span itself at most (its carets)


@lru_cache(maxsize=8)
def _lines(text: str) -> list[str]:
    """`text` split into lines, once per text (every diagnostic of a contract shares it)."""
    return text.split("\n")


def make_excerpt(text: str, line: int, column: int, end_line: int, end_column: int) -> str:
    """The source line of (line, column) and a caret line under the span (to its line's end); a
    long line is shown as a window around the span."""
    lines = _lines(text)
    if not 1 <= line <= len(lines):
        return ""
    src = lines[line - 1].rstrip("\r")
    start = max(column - 1, 0)
    stop = end_column - 1 if end_line == line else len(src)
    stop = max(min(stop, len(src), start + EXCERPT_SPAN), start + 1)
    lo, hi = max(0, start - EXCERPT_CONTEXT), min(len(src), stop + EXCERPT_CONTEXT)
    head, tail = ("…" if lo > 0 else ""), ("…" if hi < len(src) else "")
    shown = head + src[lo:hi] + tail
    # Keep tabs as tabs so the caret sits under the same character whatever the tab width.
    indent = "".join(ch if ch == "\t" else " " * _display_width(ch) for ch in head + src[lo:start])
    width = max(_display_width(src[start:stop]), 1)
    return f"{shown}\n{indent}^{'~' * (width - 1)}"


def _printable(text: str) -> str:
    return clean_text(text, len(text)) if has_surrogate(text) else text


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
    """Build a diagnostic at `span` of `text` (line 1 column 1 when the span is unknown).

    `code` must be in CODES with this `severity` (one table, documented in docs/diagnostics.md)."""
    known = CODES.get(code)
    if known is None or known[0] != severity:
        raise ValueError(f"diagnostic {code} as {severity!r}: not in CODES (expected {known and known[0]!r})")
    if span is None:
        line = column = end_line = 1
        end_column = 2
    else:
        line, column, end_line, end_column = span.line, span.column, span.end_line, span.end_column
    excerpt = make_excerpt(text, line, column, end_line, end_column) if text else ""
    # A diagnostic quotes studio text (a key, a value, a source line): a lone surrogate there could
    # not be printed or written as JSON, so it is shown as U+FFFD (SC506 reports the text itself).
    message, excerpt = _printable(message), _printable(excerpt)
    help, file, skill = (None if v is None else _printable(v) for v in (help, file, skill))
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


def strict(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics with every warning made an error (`--strict`, for CI); notes stay notes."""
    return [d.model_copy(update={"severity": "error"}) if d.severity == "warning" else d for d in diagnostics]


def count(diagnostics: list[Diagnostic]) -> dict[str, int]:
    """How many errors, warnings and notes."""
    totals = {"error": 0, "warning": 0, "note": 0}
    for d in diagnostics:
        totals[d.severity] += 1
    return totals
