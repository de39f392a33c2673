"""The user's own judgement of recorded calls (`--labels FILE`) against replay's verdicts.

A labels file is a JSON object {"<conversation id>:<call index>": "correct" | "wrong"} (the id
may itself hold colons: the index is after the last one), or a JSON list of objects
{"conversation": id, "index": n, "label": "correct" | "wrong"}. Indexes are replay's, 1-based.
"""
from __future__ import annotations

from typing import Any

from skillc.runtime import jsontext
from skillc.runtime.replay.report import Report
from skillc.runtime.vocab import Verdict

LABELS = ("correct", "wrong")
# The confusion table's columns: stopped outright, stopped until the user confirms, let through.
COLUMNS = {Verdict.REFUSED: "refused", Verdict.APPROVAL_ASKED: "approval_asked", Verdict.ALLOWED: "allowed",
           Verdict.REPLAYED: "allowed", Verdict.NOT_JUDGED: "not_judged"}


class LabelsError(ValueError):
    """The labels file cannot be read (the message says where)."""


def parse(text: str) -> dict[tuple[str, int], str]:
    """(conversation id, call index) -> label."""
    try:
        doc = jsontext.loads(text)
    except ValueError as exc:
        raise LabelsError(f"not JSON: {exc}") from None
    entries: list[tuple[Any, Any, Any, str]] = []
    if isinstance(doc, dict):
        for key, label in doc.items():
            conv, sep, index = str(key).rpartition(":")
            if not sep:
                raise LabelsError(f"key {key!r} is not \"<conversation id>:<call index>\"")
            entries.append((conv, index, label, f"key {key!r}"))
    elif isinstance(doc, list):
        for n, row in enumerate(doc, 1):
            if not isinstance(row, dict):
                raise LabelsError(f"item {n} is not an object {{conversation, index, label}}")
            entries.append((row.get("conversation"), row.get("index"), row.get("label"), f"item {n}"))
    else:
        raise LabelsError("expected an object or a list")
    out: dict[tuple[str, int], str] = {}
    for conv, index, label, where in entries:
        if not isinstance(conv, (str, int)) or str(conv) == "":
            raise LabelsError(f"{where}: no conversation id")
        try:
            number = int(index)
        except (TypeError, ValueError):
            raise LabelsError(f"{where}: the call index {index!r} is not a number") from None
        if label not in LABELS:
            raise LabelsError(f"{where}: the label {label!r} is neither \"correct\" nor \"wrong\"")
        out[(str(conv), number)] = label
    return out


def confusion(report: Report, labels: dict[tuple[str, int], str]) -> dict[str, Any]:
    """The labelled calls by label and verdict, the two numbers that matter (wrong calls
    stopped, correct calls refused), and the labels that name no call."""
    verdicts = {(c.conversation, c.index): c.verdict for c in report.calls()}
    table = {label: {"refused": 0, "approval_asked": 0, "allowed": 0, "not_judged": 0} for label in LABELS}
    unmatched = []
    for (conv, index), label in sorted(labels.items()):
        verdict = verdicts.get((conv, index))
        if verdict is None:
            unmatched.append(f"{conv}:{index}")
            continue
        table[label][COLUMNS[verdict]] += 1
    wrong, correct = table["wrong"], table["correct"]
    return {
        "labelled": len(labels) - len(unmatched),
        "table": table,
        "wrong_calls": sum(wrong.values()),
        "wrong_stopped": wrong["refused"] + wrong["approval_asked"],
        "wrong_refused": wrong["refused"],
        "correct_calls": sum(correct.values()),
        "correct_refused": correct["refused"],
        "correct_asked": correct["approval_asked"],
        "unmatched": unmatched,
    }
