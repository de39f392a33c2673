"""`USER` provenance (§5.3): does a user message state a value?

A message is read once (`read_message`) into the forms values are compared with; a value is
read once per check (`Needle`) and compared with each recent message. The rules, in order:

1. the value's text (NFKC, whitespace removed, lower case) of 4 characters or more is found in
   the message's text so normalised (the spec's substring rule, unchanged);
2. a shorter text (2 or 3 characters) must be a whole token of the message (`mia` is not said by
   `mia_li_3668`), except when it holds characters of a script written without spaces between
   words (Chinese, Japanese, Thai...), where the substring rule stays;
3. a number (or text that is a plain decimal number) matches a number the message states in
   digits, with thousands separators or units attached (`3 bags`, `3kg`, `$1,200`), or in
   English words (`three`, `twenty-five`, `two hundred`), one digit included;
4. a date (`2001-04-12`) matches the same date written in another common format (`April 12,
   2001`, `12 Apr 2001`, `2001/04/12`, `12/04/2001` and `04/12/2001` read both ways,
   `2001年4月12日`);
5. a text of several words joined by `_`, `-`, `/`, `.` or spaces (an enum value such as
   `one_way`) matches the same words in a row, however separated, or run together (`one-way`,
   `one way`, `oneway`).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Iterable

from skillc.runtime.compiled.values import normalize_text

# Scripts written without spaces between words: kana, CJK ideographs, Thai, Lao, Myanmar, Khmer.
_SPACELESS = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_SPACELESS_CHAR = re.compile(f"[{_SPACELESS}]")
_SCRIPT_RUNS = re.compile(f"[{_SPACELESS}]+|[^{_SPACELESS}]+")
# Inside a token these join its parts (an id `mia_li_3668`, `a-17`, `3.5`, `i'm`); any other
# punctuation separates tokens, and punctuation at a token's edges is not part of it.
_TOKEN_SPLIT = re.compile(r"[^\w\-.@'’+]+")
_WORDS = re.compile(r"[^\W_]+")
# A number standing on its own: not a piece of an id (`a-17`, `x_3668`), a time, a date or a
# fraction (`12:30`, `2001-04-12`, `3/4`); units may follow it (`3bags`, `5pm`).
_NUMBER = re.compile(r"(?<![\w@])(?<![\w][-/.:,])[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d_]|[-/.:,]\d)")

_UNITS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1000}

_MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
_MONTHS.update({m[:3]: n for m, n in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DATES = (
    ("ymd", re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")),
    ("ymd", re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")),
    ("either", re.compile(r"(?<!\d)(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})(?!\d)")),
    ("mdy", re.compile(rf"(?<![a-z]){_MONTH}\s*{_DAY},?\s+(\d{{4}})(?!\d)")),
    ("dmy", re.compile(rf"(?<!\d){_DAY}\s*(?:of\s+)?[-\s]?{_MONTH}[-,\s]\s*(\d{{4}})(?!\d)")),
)


def _date(y: str | int, m: str | int, d: str | int) -> date | None:
    try:
        return date(int(y), int(m), int(d))
    except ValueError:
        return None


def dates_in(text: str) -> frozenset[date]:
    """Every date written in `text` (lower case) in a common format; d/m/y and m/d/y both read."""
    found: set[date | None] = set()
    if not any(c.isdigit() for c in text):
        return frozenset()
    named = any(w in _MONTHS for w in _WORDS.findall(text))  # the month-name patterns are the slow ones
    for kind, pattern in _DATES:
        if kind in ("mdy", "dmy") and not named:
            continue
        for m in pattern.finditer(text):
            g = m.groups()
            if kind == "ymd":
                found.add(_date(g[0], g[1], g[2]))
            elif kind == "either":
                found.update((_date(g[2], g[0], g[1]), _date(g[2], g[1], g[0])))
            elif kind == "mdy":
                found.add(_date(g[2], _MONTHS[g[0]], g[1]))
            else:
                found.add(_date(g[2], _MONTHS[g[1]], g[0]))
    found.discard(None)
    return frozenset(d for d in found if d is not None)


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None


def _word_numbers(words: list[str]) -> set[Decimal]:
    """Numbers written in English words: `three`, `twenty five`, `twenty-five`, `two hundred`."""
    out: set[Decimal] = set()
    for i, w in enumerate(words):
        base = _UNITS.get(w, _TENS.get(w))
        if base is None:
            continue
        value = base
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in _TENS and 0 < _UNITS.get(nxt, 0) < 10:
            value += _UNITS[nxt]
            nxt = words[i + 2] if i + 2 < len(words) else ""
        out.add(Decimal(value))
        if nxt in _SCALES:
            out.add(Decimal(value * _SCALES[nxt]))
    if "dozen" in words:
        out.add(Decimal(12))
    return out


def _tokens(text: str) -> frozenset[str]:
    """Whole tokens: split at whitespace, at other punctuation and where a spaceless script meets
    another; edge punctuation and a possessive `'s` dropped."""
    out = set()
    for chunk in _TOKEN_SPLIT.split(text):
        for run in _SCRIPT_RUNS.findall(chunk):
            token = run.strip("-.@'’+")
            if token.endswith(("'s", "’s")):
                out.add(token[:-2])
            if token:
                out.add(token)
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class Said:
    """One user message in the forms values are compared with (worked out once per message)."""

    text: str  # NFKC, whitespace removed, lower case
    tokens: frozenset[str]
    words: tuple[str, ...]
    joined_words: frozenset[str]  # each word, and each run of two or three words run together
    numbers: frozenset[Decimal]
    dates: frozenset[date]


@lru_cache(maxsize=2048)
def read_message(message: str) -> Said:
    """Read one user message for USER matching (cached: a message is read once, not once per
    value or per turn)."""
    spaced = unicodedata.normalize("NFKC", message).lower()
    words = _WORDS.findall(spaced)
    numbers = {d for m in _NUMBER.finditer(spaced) if (d := _decimal(m.group(0))) is not None}
    numbers |= _word_numbers(words)
    runs = {"".join(words[i:i + n]) for n in (2, 3) for i in range(len(words) - n + 1)}
    return Said(text=normalize_text(message), tokens=_tokens(spaced), words=tuple(words),
                joined_words=frozenset(words) | runs, numbers=frozenset(numbers), dates=dates_in(spaced))


_PLAIN_DECIMAL = re.compile(r"[+-]?(?:0|[1-9]\d*)(?:\.\d+)?")


class Needle:
    """One value, read once for comparing with every recent message."""

    __slots__ = ("text", "short", "spaceless", "number", "dates", "words")

    def __init__(self, value: Any) -> None:
        self.text = normalize_text(value)
        self.short = len(self.text) < 4
        self.spaceless = bool(_SPACELESS_CHAR.search(self.text))
        self.number: Decimal | None = None
        self.dates: frozenset[date] = frozenset()
        self.words: tuple[str, ...] = ()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            self.number = _decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        elif isinstance(value, str):
            plain = unicodedata.normalize("NFKC", value).strip().lower()
            if _PLAIN_DECIMAL.fullmatch(plain):
                self.number = Decimal(plain)
            self.dates = (dates_in(plain) if any(c.isdigit() for c in plain)
                          and any(pattern.fullmatch(plain) for _, pattern in _DATES) else frozenset())
            words = _WORDS.findall(plain)
            if len(words) >= 2 and not self.dates:
                self.words = tuple(words)

    def found_in(self, said: Said) -> bool:
        """Whether `said` states this value (the rules of the module's docstring)."""
        if len(self.text) >= 2:
            if not self.short or self.spaceless:
                if self.text in said.text:
                    return True
            elif self.text.strip("-.@'’+") in said.tokens:  # edges stripped as the message's tokens are
                return True
        if self.number is not None and self.number.is_finite() and self.number in said.numbers:
            return True
        if self.dates and self.dates & said.dates:
            return True
        if self.words:
            if "".join(self.words) in said.joined_words:
                return True
            k, ws = len(self.words), said.words
            return any(ws[i:i + k] == self.words for i in range(len(ws) - k + 1))
        return False


def mentioned(value: Any, messages: Iterable[Said]) -> bool:
    """Whether any of the read messages states `value`."""
    needle = _needle(value) if isinstance(value, (str, int, float)) else Needle(value)
    return any(needle.found_in(said) for said in messages)


# A value is read the same way every time (a Needle is never changed after it is built), and the
# chain asks about the same few argument values call after call: reading one was a tenth of a
# USER-checked call. Bounded; typed, so True, 1 and 1.0 stay three readings.
@lru_cache(maxsize=2048, typed=True)
def _needle(value: str | int | float) -> Needle:
    return Needle(value)
