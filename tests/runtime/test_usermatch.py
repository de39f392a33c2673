"""USER matching (§5.3), row by row: the value, what the user said, whether it counts as said.

Rows marked "spec rule" (docs/interpretations.md: USER provenance) were accepted (or refused) by
the plain normalised-substring rule and must stay so; the others are the widened and tightened readings (docs/interpretations.md).
"""
from __future__ import annotations

import time
from typing import Any

import pytest

from skillc.runtime.call.usermatch import mentioned, read_message

ROWS: list[tuple[Any, str, bool, str]] = [
    # the substring rule for values of 4 characters or more stays as it was
    ("Spring launch", "Rename it to Spring Launch 2027", True, "spec rule: case and spaces ignored"),
    ("T-7001", "Send transfer T-7001 of 420", True, "spec rule"),
    (7001, "transfer T-7001", True, "spec rule: 4 digits, substring"),
    ("featured", "Tag article 17 as featured", True, "spec rule"),
    (True, "set it to true", True, "spec rule: a boolean's own text"),
    ("ＡＢＣＤ", "abcd please", True, "spec rule: NFKC"),
    ("Autumn", "Rename Spring", False, "spec rule: never said"),
    # short values: a whole token, not a piece of a longer one
    ("Mia", "my user id is mia_li_3668", False, "a piece of an id does not say it"),
    ("Mia", "I'm Mia.", True, "a whole token, edge punctuation dropped"),
    ("Mia", "Mia's booking", True, "possessive"),
    ("17", "Tag article 17 as featured", True, "whole token"),
    ("17", "article A-17", False, "a piece of an id"),
    ("LA", "from NYC/LA", True, "a slash separates tokens"),
    ("LA", "LAX please", False, "part of a longer token"),
    ("ab", "cab", False, "spec rule accepted this; a short value must be a whole token now"),
    ("a", "a ticket", False, "one character that is not a number is never said"),
    # text without spaces between words keeps the substring rule
    ("北京", "我想去北京出差", True, "CJK: substring"),
    ("LA", "我要去LA", True, "a token where scripts meet"),
    ("是", "是的", False, "one character, below the spec rule's minimum"),
    # numbers in digits, with units, with separators, in words
    (3, "3 bags please", True, "a number with units"),
    (3, "I have 3bags", True, "units attached"),
    ("3", "three bags", True, "a number written as a word"),
    (25, "twenty-five of them", True, "compound number word"),
    (200, "two hundred dollars", True, "scale word"),
    (1200, "$1,200 total", True, "thousands separator and currency"),
    (420.0, "an amount of 420", True, "a float equal to the integer said"),
    (5, "Pay Bob 15 euros", False, "a digit inside a longer number"),
    (3668, "user mia_li_3668", True, "spec rule: four characters, substring"),
    (668, "user mia_li_668", False, "digits inside an id are not a number said"),
    (12, "at 12:30", True, "a colon separates tokens"),
    (3, "seat 3/4", False, "part of a fraction"),
    ("007", "agent 7", False, "text with leading zeros is not the number 7"),
    # dates in other common formats
    ("2001-04-12", "born April 12, 2001", True, "month name first"),
    ("2001-04-12", "born 12th of April 2001", True, "day first"),
    ("2001-04-12", "born 12 Apr 2001", True, "abbreviated month"),
    ("2001-04-12", "born 2001/04/12", True, "slashes"),
    ("2001-04-12", "born 04/12/2001", True, "m/d/y"),
    ("2001-04-12", "born 12/04/2001", True, "d/m/y"),
    ("2001-04-12", "2001年4月12日出生", True, "CJK date"),
    ("2001-04-12", "born April 12", False, "no year said"),
    ("2001-04-12", "born April 13, 2001", False, "another day"),
    # enum words
    ("one_way", "a one-way ticket", True, "hyphenated words"),
    ("one_way", "one way please", True, "spaced words"),
    ("one_way", "oneway", True, "run together"),
    ("ROUND_TRIP", "a round trip", True, "upper-case enum value"),
    ("one_way", "someone wayward", False, "not the same words"),
    ("one_way", "one ticket, no way", False, "the words not in a row"),
]


@pytest.mark.parametrize(("value", "message", "said", "why"), ROWS, ids=[f"{r[0]!r}|{r[1]}" for r in ROWS])
def test_user_matching(value: Any, message: str, said: bool, why: str) -> None:
    assert mentioned(value, [read_message(message)]) is said, why


def test_matching_stays_fast() -> None:
    # It runs for every USER argument of every call: ten long messages read once, then a
    # thousand values of every kind checked against them, well inside a second on a loaded CI.
    messages = [read_message(f"message {i}: book {i} bags on April {i + 1}, 2001 for one_way mia_li_{i} " * 20)
                for i in range(10)]
    values = [3, "2001-04-12", "one_way", "Mia", "spring launch", 1200.5] * 170
    start = time.perf_counter()
    for v in values:
        mentioned(v, messages)
    assert time.perf_counter() - start < 1.0
