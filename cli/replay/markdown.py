"""`skillc replay --format markdown`: the report as Markdown (a pull request comment, a wiki page):
totals, writes, per tool and per code tables, then each conversation's calls as a table."""
from __future__ import annotations

from typing import Any

from skillc.replay.human import COLUMNS, HEADS, after_text
from skillc.runtime.replay.judge import CallVerdict
from skillc.runtime.replay.report import Report, totals
from skillc.runtime.words.vocab import Verdict

SHOWN = {Verdict.ALLOWED: "allowed", Verdict.REFUSED: "**refused**", Verdict.APPROVAL_ASKED: "**approval asked**",
         Verdict.REPLAYED: "replayed", Verdict.NOT_JUDGED: "not judged"}


def cell(value: Any) -> str:
    """Text safe inside a Markdown table cell: pipes, backticks, angle brackets and newlines escaped."""
    text = "" if value is None else str(value)
    for a, b in (("\\", "\\\\"), ("|", "\\|"), ("`", "\\`"), ("<", "&lt;"), (">", "&gt;"), ("*", "\\*"), ("_", "\\_")):
        text = text.replace(a, b)
    return " ".join(text.split())


def why(c: CallVerdict) -> str:
    """The verdict's reason in one cell."""
    parts = []
    if c.error and c.verdict != Verdict.APPROVAL_ASKED:
        parts.append(f"{c.error} ({c.code}): {c.message}")
    elif c.verdict == Verdict.REPLAYED:
        parts.append(c.message)
    if c.confirmation is not None:
        parts.append(f"user {c.confirmation.where}: \u201c{c.confirmation.text}\u201d ({c.confirmation.reading})")
    elif c.verdict == Verdict.APPROVAL_ASKED:
        parts.append("no user message to read as a confirmation")
    if c.after_confirmation is not None:
        parts.append(f"confirmed run: {after_text(c.after_confirmation)}")
    if c.outcome is not None and c.outcome.get("business_ok") is False:
        parts.append(f"answer judged a business failure: {c.outcome.get('code')} {c.outcome.get('message', '')}")
    if c.outcome is not None and c.outcome.get("error") and c.outcome.get("business_ok") is not False:
        parts.append(f"{c.outcome.get('error')}: {c.outcome.get('message', '')}")
    if c.counterfactual:
        parts.append("counterfactual")
    return cell("; ".join(parts))


def _table(rows: list[tuple[str, dict[str, int]]]) -> list[str]:
    out = ["| | " + " | ".join(HEADS) + " |", "|---|" + "---:|" * len(HEADS)]
    out += [f"| {cell(name)} | " + " | ".join(str(row[c]) for c in COLUMNS) + " |" for name, row in rows]
    return out


def render(report: Report, confusion: dict[str, Any] | None = None) -> str:
    """The whole report as Markdown."""
    t = totals(report)
    out = ["# skillc replay", "",
           f"{t['conversations']} conversation(s), {t['calls']} tool call(s), studio {cell(report.studio)}"
           + (f", agent {cell(report.agent)}" if report.agent else "") + ".", "", "## Verdicts", ""]
    out += _table([("all calls", t), ("writes", t["writes"])])
    out += ["", "## By tool", ""] + _table(list(t["by_tool"].items()))
    if t["by_code"]:
        out += ["", "## By code", "", "| count | name | code |", "|---:|---|---|"]
        out += [f"| {r['count']} | {cell(r['name'])} | {cell(r['code'])} |" for r in t["by_code"]]
    if confusion is not None:
        from skillc.replay.confusion import markdown

        out += [""] + markdown(confusion)
    out += ["", "## Conversations"]
    for conv in report.conversations:
        out += ["", f"### {cell(conv.id)}", "", f"{cell(conv.file)}{':' + str(conv.line) if conv.line else ''}, "
                f"agent {cell(conv.agent)}, {conv.user_messages} user message(s), {len(conv.calls)} call(s)"]
        if conv.counterfactual_from is not None and conv.counterfactual_from < len(conv.calls):
            out.append(f"\nCall {conv.counterfactual_from} was stopped: its recorded answer is not evidence, so the "
                       "verdicts after it are counterfactual.")
        for note in conv.notes:
            out.append(f"\n> {cell(note)}")
        if conv.calls:
            out += ["", "| # | tool | verdict | skill | why |", "|---:|---|---|---|---|"]
            out += [f"| {c.index} | {cell(c.tool)}{' (write)' if c.write else ''} | {SHOWN[c.verdict]} | "
                    f"{cell(c.skill)} | {why(c)} |" for c in conv.calls]
    if report.unreadable:
        out += ["", "## Unreadable records (skipped)", ""]
        out += [f"- {cell(u.file)}{':' + str(u.line) if u.line else ''}: {cell(u.message)}" for u in report.unreadable]
    return "\n".join(out) + "\n"
