"""How replay reads a recorded user message next to a write held for approval: only a plain yes
at the start is a confirmation; a yes that goes on to say no is not; a skillc decision is exact."""
from __future__ import annotations

import pytest

from skillc.runtime.replay.confirmation import read
from skillc.runtime.replay.recorded import UserMessage
from skillc.runtime.words.vocab import Reading


@pytest.mark.parametrize(("text", "reading"), [
    ("yes", Reading.CONFIRMED),
    ("Yes.", Reading.CONFIRMED),
    ("YES, please go ahead", Reading.CONFIRMED),
    ("ok", Reading.CONFIRMED),
    ("Sure, do it", Reading.CONFIRMED),
    ("confirm", Reading.CONFIRMED),
    ("确认", Reading.CONFIRMED),
    ("好的，作废吧", Reading.CONFIRMED),
    ("no", Reading.DECLINED),
    ("No, cancel that", Reading.DECLINED),
    ("don't", Reading.DECLINED),
    ("不要", Reading.DECLINED),
    ("yes but don't void it yet", Reading.UNCLEAR),
    ("ok wait", Reading.UNCLEAR),
    ("yesterday I asked you something else", Reading.UNCLEAR),
    ("okapi", Reading.UNCLEAR),
    ("what does that mean?", Reading.UNCLEAR),
    ("", Reading.UNCLEAR),
])
def test_a_message_reads_as_yes_no_or_unclear(text: str, reading: Reading) -> None:
    assert read(UserMessage(text)) == reading


@pytest.mark.parametrize(("decision", "reading"), [("CONFIRM", Reading.CONFIRMED), ("REJECT", Reading.DECLINED),
                                                   ("CANCEL", Reading.DECLINED), ("MAYBE", Reading.UNCLEAR)])
def test_a_recorded_decision_is_read_exactly(decision: str, reading: Reading) -> None:
    assert read(UserMessage("", decision=decision)) == reading
