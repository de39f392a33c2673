"""--labels: both file shapes, a clear error for each malformed entry, and the confusion table
placing each labelled call by what the contracts made of it in effect."""
from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.transcripts import FOUND, VOID, VOIDED, answer, call, judged, say, user

from skillc.runtime.replay.labels import LabelsError, confusion, parse
from skillc.runtime.replay.report import Report


def test_both_shapes_read_the_same() -> None:
    as_object = parse(json.dumps({"a:b:1": "correct", "x:2": "wrong"}))
    as_list = parse(json.dumps([{"conversation": "a:b", "index": 1, "label": "correct"},
                                {"conversation": "x", "index": "2", "label": "wrong"}]))
    assert as_object == as_list == {("a:b", 1): "correct", ("x", 2): "wrong"}


@pytest.mark.parametrize(("text", "says"), [
    ("{", "not JSON"),
    ('"yes"', "expected an object or a list"),
    ('{"nocolon": "wrong"}', "is not \"<conversation id>:<call index>\""),
    ('{"c:one": "wrong"}', "the call index 'one' is not a number"),
    ('{"c:1": "bad"}', "neither \"correct\" nor \"wrong\""),
    ('[{"index": 1, "label": "wrong"}]', "item 1: no conversation id"),
    ('[3]', "item 1 is not an object"),
])
def test_a_malformed_labels_file_says_where(text: str, says: str) -> None:
    with pytest.raises(LabelsError) as info:
        parse(text)
    assert says in str(info.value)


def test_the_table_places_calls_by_their_effective_outcome(compiled_example: Any) -> None:
    conv = judged(compiled_example, [
        user("Void invoice INV-9 please, reason: duplicate"),
        call("a", "inv_invoice_void", VOID), answer("a", VOIDED),  # 1 refused: nothing looked up yet
        call("b", "inv_invoice_find", {"invoiceNo": "INV-9"}), answer("b", FOUND),  # 2 allowed
        say("Void INV-9?"), user("yes"),
        call("c", "inv_invoice_void", VOID), answer("c", VOIDED),  # 3 asked, then confirmed
        call("d", "inv_invoice_void", VOID), answer("d", VOIDED),  # 4 replayed
    ])
    report = Report(studio="s", files=[], conversations=[conv])
    c = confusion(report, {("c", 1): "wrong", ("c", 2): "correct", ("c", 3): "correct", ("c", 4): "wrong",
                           ("c", 9): "wrong"})
    assert c["table"]["wrong"]["refused"] == 1 and c["table"]["wrong"]["replayed"] == 1
    assert c["table"]["correct"]["allowed"] == 1 and c["table"]["correct"]["approval_confirmed"] == 1
    assert (c["wrong_calls"], c["wrong_stopped"], c["correct_refused"], c["labelled"]) == (2, 2, 0, 4)
    assert c["unmatched"] == ["c:9"]
