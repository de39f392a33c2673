"""Reading a recorded user message as the answer to "may I make this change?".

Replay never decides silently whether a user agreed: the message is quoted in the report beside
the reading. The reading is deliberately narrow: only a message that *starts* with a plain yes
(or a skillc trace's explicit CONFIRM) is `confirmed`; one that starts with a plain no is
`declined`; anything else is `unclear` (and the write is then not taken as made).
"""
from __future__ import annotations

import re
import unicodedata

from skillc.runtime.replay.recorded import UserMessage
from skillc.runtime.words.vocab import Decision, Reading

YES = ("yes", "y", "yeah", "yep", "yup", "sure", "ok", "okay", "confirm", "confirmed", "i confirm",
       "go ahead", "proceed", "please proceed", "please do", "do it", "correct", "that's right", "right",
       "确认", "是", "是的", "好", "好的", "对", "可以")
NO = ("no", "n", "nope", "cancel", "stop", "don't", "do not", "wait", "不", "不要", "不是", "取消", "别")
# A "yes" that still says no ("yes, but don't …", "ok wait") is not a confirmation.
NEGATION = re.compile(r"\b(no|not|don't|dont|cancel|stop|wait)\b|不|别|取消")
READINGS: dict[str, Reading] = {Decision.CONFIRM: Reading.CONFIRMED, Decision.REJECT: Reading.DECLINED, Decision.CANCEL: Reading.DECLINED}


def _prefix(text: str, phrases: tuple[str, ...]) -> int:
    """The length of the longest phrase the text starts with as whole words (0: none)."""
    best = 0
    for p in phrases:
        if text.startswith(p) and (len(text) == len(p) or not (p[-1].isascii() and text[len(p)].isalnum())):
            best = max(best, len(p))
    return best


def read(message: UserMessage) -> Reading:
    """confirmed / declined / unclear (see the module's docstring)."""
    if message.decision is not None:
        return READINGS.get(message.decision, Reading.UNCLEAR)
    text = unicodedata.normalize("NFKC", message.text).strip().lower().replace("’", "'")
    text = text.lstrip("\"'([ ")
    if _prefix(text, NO):
        return Reading.DECLINED
    yes = _prefix(text, YES)
    if yes:
        return Reading.UNCLEAR if NEGATION.search(text[yes:]) else Reading.CONFIRMED
    return Reading.UNCLEAR
