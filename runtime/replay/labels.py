"""The user's own judgement of recorded calls (`--labels FILE`) against replay's verdicts.

A labels file is a JSON object {"<conversation id>:<call index>": "correct" | "wrong"} (the id
may itself hold colons: the index is after the last one), or a JSON list of objects
{"conversation": id, "index": n, "label": "correct" | "wrong"}. Indexes are replay's, 1-based.
"""
from __future__ import annotations

from typing import Any

from skillc.runtime.text import jsontext
from skillc.runtime.replay.judge import CallVerdict
from skillc.runtime.replay.report import Report
from skillc.runtime.words.vocab import Verdict

LABELS = ("correct", "wrong")
# The confusion table's columns, from stopped outright to let through: refused (at the call, or
# when confirmed), replayed (an idempotent repeat: nothing sent), held for a confirmation the
# recording does not give, let through after the user's recorded yes, allowed.
COLUMNS = ("refused", "replayed", "approval_unconfirmed", "approval_confirmed", "allowed", "not_judged")


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


def column(call: CallVerdict) -> str:
    """Where a call's effective outcome puts it in the confusion table."""
    if call.verdict == Verdict.APPROVAL_ASKED:
        after = call.after_confirmation
        if after is None:
            return "approval_unconfirmed"
        return "refused" if after.get("verdict") == Verdict.REFUSED else "approval_confirmed"
    return {Verdict.REFUSED: "refused", Verdict.REPLAYED: "replayed", Verdict.ALLOWED: "allowed"}.get(
        call.verdict, "not_judged")


def confusion(report: Report, labels: dict[tuple[str, int], str]) -> dict[str, Any]:
    """The labelled calls by label and effective outcome, the two numbers that matter (wrong
    calls the contracts stopped, correct calls they refused), and the labels that name no call."""
    calls = {(c.conversation, c.index): c for c in report.calls()}
    table = {label: dict.fromkeys(COLUMNS, 0) for label in LABELS}
    unmatched = []
    for (conv, index), label in sorted(labels.items()):
        call = calls.get((conv, index))
        if call is None:
            unmatched.append(f"{conv}:{index}")
            continue
        table[label][column(call)] += 1
    wrong, correct = table["wrong"], table["correct"]
    return {
        "labelled": len(labels) - len(unmatched),
        "table": table,
        "wrong_calls": sum(wrong.values()),
        "wrong_stopped": wrong["refused"] + wrong["replayed"],
        "wrong_held": wrong["approval_unconfirmed"],
        "wrong_after_yes": wrong["approval_confirmed"],
        "correct_calls": sum(correct.values()),
        "correct_refused": correct["refused"],
        "correct_held": correct["approval_unconfirmed"],
        "unmatched": unmatched,
    }
