"""`skillc replay --format human`: the report as terminal text. Totals first (overall, writes,
per tool, per code), then every call that was not simply allowed, then what the reader noted."""
from __future__ import annotations

from typing import Any

from skillc.runtime.replay.judge import CallVerdict
from skillc.runtime.replay.report import Report, totals
from skillc.runtime.words.vocab import Verdict

BOLD, RED, GREEN, YELLOW, DIM, RESET = "\033[1m", "\033[31m", "\033[32m", "\033[33m", "\033[2m", "\033[0m"
COLUMNS = ("calls", "allowed", "refused", "approval_asked", "replayed")
HEADS = ("calls", "allowed", "refused", "approval", "replayed")
LABEL = {Verdict.REFUSED: "REFUSED", Verdict.APPROVAL_ASKED: "APPROVAL ASKED", Verdict.REPLAYED: "REPLAYED",
         Verdict.ALLOWED: "allowed", Verdict.NOT_JUDGED: "not judged"}


def _table(rows: list[tuple[str, dict[str, int]]]) -> list[str]:
    width = max([len(name) for name, _ in rows] + [8])
    lines = ["  " + "".ljust(width) + "".join(h.rjust(10) for h in HEADS)]
    for name, row in rows:
        lines.append("  " + name.ljust(width) + "".join(str(row[c]).rjust(10) for c in COLUMNS))
    return lines


def after_text(after: dict[str, Any]) -> str:
    """What the approved run of a confirmed write came to, in words."""
    if after.get("verdict"):
        return f"{after['verdict']} {after.get('error') or ''}".strip()
    if after.get("business_ok"):
        return "business ok"
    return f"{after.get('error', 'failed')}: {after.get('message', '')}"


def counterfactual_note(n: int) -> str:
    """Why verdicts after a stopped call are marked counterfactual, for `n` such conversations."""
    return (f"In {n} conversation(s) a call was stopped (refused, or a write not confirmed): its recorded answer "
            "is not evidence, so the verdicts after it (marked counterfactual) judge a conversation that would "
            "have gone differently.")


def call_line(c: CallVerdict) -> str:
    """One call as a line: where, tool, verdict and why."""
    head = f"{c.conversation} #{c.index} {c.tool}: {LABEL[c.verdict]}"
    if c.error and c.verdict != Verdict.APPROVAL_ASKED:
        head += f" {c.error} ({c.code}): {c.message}"
    if c.confirmation is not None:
        head += f"; user {c.confirmation.where}: \"{c.confirmation.text}\" ({c.confirmation.reading})"
    elif c.verdict == Verdict.APPROVAL_ASKED:
        head += "; no user message to read as a confirmation"
    if c.after_confirmation is not None:
        head += f" -> confirmed run: {after_text(c.after_confirmation)}"
    if c.counterfactual:
        head += " [counterfactual]"
    return head


def render(report: Report, *, color: bool = False, labels: Any = None) -> str:
    """The whole report as text."""
    def c(code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if color else text

    t = totals(report)
    lines = [c(BOLD, f"skillc replay: {t['conversations']} conversation(s), {t['calls']} tool call(s)")
             + " from " + (', '.join(report.files) if len(report.files) <= 2 else f"{len(report.files)} files")]
    lines.append(f"  studio {report.studio or '?'}"
                 + (f", agent {report.agent}" if report.agent else ", agent chosen per conversation")
                 + (f", skill {report.skill}" if report.skill else "")
                 + (", platform " + " ".join(f"{k}={v}" for k, v in report.platform.items()) if report.platform else ""))
    lines += ["", c(BOLD, "verdicts")]
    lines += _table([("all calls", t), ("writes", t["writes"])])
    if t["by_tool"]:
        lines += ["", c(BOLD, "by tool")] + _table(list(t["by_tool"].items()))
    if t["by_code"]:
        lines += ["", c(BOLD, "by code")]
        for row in t["by_code"]:
            lines.append(f"  {row['count']:>6}  {row['name']} ({row['code']})")
    stopped = [v for v in report.calls() if v.verdict in (Verdict.REFUSED, Verdict.APPROVAL_ASKED, Verdict.REPLAYED)]
    if stopped:
        lines += ["", c(BOLD, "calls not simply allowed")]
        for v in stopped:
            colour = RED if v.verdict == Verdict.REFUSED else YELLOW
            lines.append("  " + c(colour, call_line(v)))
    failed = [v for v in report.calls() if v.outcome and v.outcome.get("business_ok") is False]
    if failed:
        lines += ["", c(BOLD, "allowed calls whose recorded answer the contract judges a business failure")]
        lines += [f"  {v.conversation} #{v.index} {v.tool}: code {v.outcome.get('code')}, "
                  f"message {v.outcome.get('message', '')!r}" for v in failed if v.outcome]
    if labels is not None:
        from skillc.replay.confusion import lines as confusion_lines

        lines += [""] + confusion_lines(labels, color=color)
    notes = [(conv.id, n) for conv in report.conversations for n in conv.notes]
    if notes:
        lines += ["", c(BOLD, "notes")] + [f"  {cid}: {n}" for cid, n in notes]
    if t["counterfactual_conversations"]:
        lines += ["", c(DIM, counterfactual_note(t["counterfactual_conversations"]))]
    if report.unreadable:
        lines += ["", c(BOLD, f"unreadable records skipped: {len(report.unreadable)}")]
        lines += [f"  {u.file}{':' + str(u.line) if u.line else ''}: {u.message}" for u in report.unreadable]
    return "\n".join(lines) + "\n"
