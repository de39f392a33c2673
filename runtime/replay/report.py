"""A replay's findings: the verdicts of every conversation, their totals, and the JSON document
`skillc replay --format json` writes (schema documented in docs/replay.md; `version` changes
only when a field changes meaning or goes away, never when one is added)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from skillc.runtime.replay.judge import CallVerdict, ConversationResult
from skillc.runtime.replay.recorded import Unreadable
from skillc.runtime.words.vocab import Pairing, Verdict

SCHEMA = "skillc.replay"
VERSION = 1
VERDICTS: tuple[Verdict, ...] = (Verdict.ALLOWED, Verdict.REFUSED, Verdict.APPROVAL_ASKED, Verdict.REPLAYED,
                                 Verdict.NOT_JUDGED)


@dataclass
class Report:
    """Everything one replay found, in the order it was read."""

    studio: str
    files: list[str]
    conversations: list[ConversationResult] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)
    platform: dict[str, Any] = field(default_factory=dict)
    agent: str | None = None
    skill: str | None = None

    def calls(self) -> list[CallVerdict]:
        """Every call verdict, conversation by conversation."""
        return [c for conv in self.conversations for c in conv.calls]


def counts(calls: list[CallVerdict]) -> dict[str, int]:
    """calls, and one count per verdict."""
    seen = Counter(c.verdict for c in calls)
    return {"calls": len(calls), **{str(v): seen.get(v, 0) for v in VERDICTS}}


def totals(report: Report) -> dict[str, Any]:
    """The report's totals: overall, the writes alone, per tool, per refusal code."""
    calls = report.calls()
    by_tool: dict[str, list[CallVerdict]] = {}
    for c in calls:
        by_tool.setdefault(c.tool, []).append(c)
    codes: dict[str, dict[str, Any]] = {}
    for c in calls:
        if c.error:
            row = codes.setdefault(str(c.error), {"name": str(c.error), "code": c.code, "count": 0})
            row["count"] += 1
    return {
        "conversations": len(report.conversations),
        "unreadable": len(report.unreadable),
        "counterfactual_conversations": sum(1 for conv in report.conversations if conv.counterfactual_from is not None),
        "paired_by_position": sum(1 for c in calls if c.pairing == Pairing.POSITION),
        "unanswered": sum(1 for c in calls if c.pairing == Pairing.NONE and c.verdict != Verdict.NOT_JUDGED),
        **counts(calls),
        "writes": counts([c for c in calls if c.write]),
        "by_tool": {tool: counts(rows) for tool, rows in sorted(by_tool.items())},
        "by_code": sorted(codes.values(), key=lambda r: (-r["count"], r["name"])),
    }


def call_doc(c: CallVerdict) -> dict[str, Any]:
    """One call as the JSON document shows it."""
    doc: dict[str, Any] = {"index": c.index, "tool": c.tool, "verdict": str(c.verdict), "skill": c.skill,
                           "write": c.write, "args": c.args, "call_id": c.call_id, "batch": c.batch,
                           "pairing": str(c.pairing), "counterfactual": c.counterfactual}
    if c.error:
        doc.update(error=str(c.error), code=c.code, message=c.message)
    elif c.message:
        doc["message"] = c.message
    if c.outcome is not None:
        doc["outcome"] = c.outcome
    if c.confirmation is not None:
        doc["confirmation"] = {"where": str(c.confirmation.where), "text": c.confirmation.text,
                               "reading": str(c.confirmation.reading)}
    if c.after_confirmation is not None:
        doc["after_confirmation"] = c.after_confirmation
    if c.provenance:
        doc["provenance"] = c.provenance
    return doc


def document(report: Report, labels: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON document of a replay (docs/replay.md, "The JSON report")."""
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "version": VERSION,
        "studio": report.studio,
        "agent": report.agent,
        "skill": report.skill,
        "platform": report.platform,
        "files": report.files,
        "totals": totals(report),
        "writes": [{"conversation": c.conversation, "index": c.index, "tool": c.tool, "verdict": str(c.verdict)}
                   for c in report.calls() if c.write],
        "conversations": [{"id": conv.id, "file": conv.file, "line": conv.line, "agent": conv.agent,
                           "user_messages": conv.user_messages, "text_replies": conv.text_replies,
                           "counterfactual_from": conv.counterfactual_from, "notes": conv.notes,
                           "calls": [call_doc(c) for c in conv.calls]} for conv in report.conversations],
        "unreadable": [{"file": u.file, "line": u.line, "message": u.message} for u in report.unreadable],
    }
    if labels is not None:
        doc["labels"] = labels
    return doc
