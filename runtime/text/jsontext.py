"""JSON text on the runtime's hot paths: store rows, tool answers, model arguments.

orjson encodes and decodes several times faster than the standard library (a write's
pre-registration encodes its task and evidence inside the unit of work), but it does not give the
same values everywhere. Where it would differ, the standard library does the work:

- integers past 64 bits: orjson refuses to encode them and decodes them as floats (precision
  silently lost), so a text with a run of 19 or more digits is decoded by the standard library;
- lone surrogates, NaN/Infinity literals, numbers past a double's range: orjson refuses them, the
  standard library reads them and the border (runtime/text/border.py) decides;
- anything orjson cannot encode (a datetime, a dataclass, an object): `str()` of it, as before.

Two differences stay, both on values the border never lets in: a non-finite float is encoded as
null (the standard library writes NaN, which is not JSON), and orjson's text is compact (no
spaces). Nothing that hashes or compares text (idempotency keys, the audit chain) uses this
module: those keep their canonical standard-library form.
"""
from __future__ import annotations

import json
import re
from typing import Any

try:  # a declared dependency; the standard library alone still works
    import orjson
except ImportError:  # pragma: no cover - exercised only without orjson installed
    orjson = None  # type: ignore[assignment]

_STD_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str, separators=(",", ":")).encode
_STD_DECODE = json.JSONDecoder().decode
# A run of 19 ASCII digits (past 64 bits is 20; 19 leaves a margin), found by mapping every byte
# to 1 (a digit) or 0 and looking for 19 ones: a tenth of what a regular expression costs.
_DIGITS = bytes(1 if 48 <= b <= 57 else 0 for b in range(256))
_LONG_RUN = b"\x01" * 19
_OPTIONS = 0 if orjson is None else (orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
                                     | orjson.OPT_PASSTHROUGH_DATACLASS)


def dumps(value: Any) -> str:
    """`value` as compact JSON text (non-ASCII kept, unknown objects as their `str()`)."""
    if orjson is not None:
        try:
            return orjson.dumps(value, default=str, option=_OPTIONS).decode()
        except TypeError:  # past 64 bits, a lone surrogate, a key orjson refuses
            pass
    return _STD_ENCODE(value)


def loads_exact(text: str | bytes) -> Any:
    """The value of JSON text read by orjson, which refuses lone surrogates, NaN, Infinity and
    numbers past a double; `ValueError` for those, for text holding a long integer (orjson would
    read it as a float), for text that is not JSON, and when orjson is not installed."""
    if orjson is None or _has_long_number(text):
        raise ValueError("left to the standard library")
    return orjson.loads(text)  # orjson.JSONDecodeError is a ValueError


def _has_long_number(text: str | bytes) -> bool:
    """True when `text` holds 19 ASCII digits in a row (in a number, or anywhere: a string of
    digits only sends the text the slower way)."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return _LONG_RUN in data.translate(_DIGITS)


MAX_NESTING = 512
"""Arrays and objects inside one another that the standard library is given at most: it reads
nesting by recursion, so deeper text is refused before it is read (orjson stops at 1024 itself)."""
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS = re.compile(r"[\[\]{}]")


class TooDeep(ValueError):
    """JSON text nested past `MAX_NESTING`: refused unread, so reading it never recurses deeply."""


def nesting_over(text: str | bytes, limit: int = MAX_NESTING) -> bool:
    """True when `text` opens more than `limit` arrays/objects inside one another (strings are
    skipped). A scan, no recursion; free for text with few brackets."""
    # bytes as latin-1: quotes, backslashes and brackets are ASCII, and no byte of a UTF-8
    # sequence is, so the scan sees the same structure
    chars = text if isinstance(text, str) else text.decode("latin-1")
    if chars.count("[") + chars.count("{") <= limit:
        return False
    depth = 0
    for found in _BRACKETS.finditer(_STRING.sub("", chars)):
        if found.group() in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def loads_standard(text: str | bytes) -> Any:
    """The value of JSON text read by the standard library; `json.JSONDecodeError` (with its
    message and position) when it is not JSON, `TooDeep` when nested past `MAX_NESTING`."""
    if nesting_over(text):
        raise TooDeep(f"nesting deeper than {MAX_NESTING}")
    return _STD_DECODE(text) if isinstance(text, str) else json.loads(text)


def loads(text: str | bytes) -> Any:
    """The value of JSON text; `json.JSONDecodeError` (the standard library's, with its message
    and position) when it is not JSON."""
    try:
        return loads_exact(text)
    except ValueError:
        return loads_standard(text)  # reads what orjson refuses, or says why not
