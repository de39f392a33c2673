"""Names and numbers as outside text spells them: one id validator and one ASCII-digit parser.

Every id a caller chooses (a session or thread id, a run id) becomes a file name, a store key and a
trace field, so it is checked once, whole, by `valid_id` (a full match: "abc\\n" is not "abc").
Every number read from outside text (a header, a query parameter, a path segment of a contract or
of a model's `sourceRef`) goes through `ascii_int`: Python's `str.isdigit` accepts "²" and "٣",
which `int()` then refuses, and `int()` of a few thousand digits raises; here only ASCII digits,
at most `MAX_DIGITS` of them, make a number, anything else is not one.
"""
from __future__ import annotations

import re

ID_LIMIT = 128
"""Characters in one id (docs/API.md §1 Ids)."""
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,%d}" % (ID_LIMIT - 1))
ID_RULE = f"1-{ID_LIMIT} characters of [A-Za-z0-9._:-], starting with a letter or digit"

MAX_DIGITS = 18
"""Digits of one number read from text: below 2**63, past every index, seq, timestamp or size."""


def valid_id(text: object) -> bool:
    """True when `text` is an id the service accepts: `ID_RULE`, the whole string."""
    return isinstance(text, str) and _ID.fullmatch(text) is not None


def ascii_int(text: str, max_digits: int = MAX_DIGITS) -> int | None:
    """The non-negative integer spelled by `text` in ASCII digits only (at most `max_digits`), or
    None: for "", "+1", " 1", "1.0", "²", "١٢" and 5,000 digits alike, without converting them."""
    if not 0 < len(text) <= max_digits or not text.isascii() or not text.isdigit():
        return None
    return int(text)
