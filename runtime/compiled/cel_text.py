"""CEL's conversions and string functions for compiled rule code (docs/reference/rules.md):
`int()`, `double()`, `string()`, `bool()`, `dyn()`, `startsWith`, `matches` (the linear-time
pattern language of runtime/compiled/textpattern.py) and the rest."""
from __future__ import annotations

import math
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any


from skillc.runtime.compiled import textpattern
from skillc.runtime.compiled.cel_time import _EPOCH, format_duration, format_timestamp
from skillc.runtime.compiled.cel_values import Undecidable, _int64, _is_int, _is_num, type_name
from skillc.runtime.compiled.textpattern import Pattern


def to_int(v: Any) -> int:
    """`int(v)`: an int, a double or decimal truncated, numeric text, a timestamp's epoch seconds."""
    if _is_int(v):
        return v
    if type(v) is float or isinstance(v, Decimal):
        if not math.isfinite(v):
            raise Undecidable("int", f"{v} has no int value")
        return _int64(int(v), "int")
    if isinstance(v, str):
        try:
            return _int64(int(v, 10), "int")
        except ValueError:
            raise Undecidable("int", f"{v!r} is not an integer") from None
    if isinstance(v, datetime):
        return int((v - _EPOCH) // timedelta(seconds=1))
    raise Undecidable("int", f"a {type_name(v)} has no int value")


def to_double(v: Any) -> float:
    """`double(v)`: a number or numeric text as a double."""
    if _is_num(v):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            raise Undecidable("double", f"{v!r} is not a number") from None
    raise Undecidable("double", f"a {type_name(v)} has no double value")


def to_string(v: Any) -> str:
    """`string(v)`: text of a string, number, bool, timestamp or duration."""
    if isinstance(v, str):
        return v
    if type(v) is bool:
        return "true" if v else "false"
    if _is_int(v) or isinstance(v, Decimal):
        return str(v)
    if type(v) is float:
        return repr(v) if math.isfinite(v) else {"inf": "+infinity", "-inf": "-infinity"}.get(repr(v), "NaN")
    if isinstance(v, datetime):
        return format_timestamp(v)
    if isinstance(v, timedelta):
        return format_duration(v)
    raise Undecidable("string", f"a {type_name(v)} has no string value")


def to_bool(v: Any) -> bool:
    """`bool(v)`: a bool, or the text true/false."""
    if type(v) is bool:
        return v
    if isinstance(v, str) and v in ("true", "false", "True", "False", "TRUE", "FALSE", "t", "f", "1", "0"):
        return v in ("true", "True", "TRUE", "t", "1")
    raise Undecidable("bool", f"{v!r} is not a bool")


def dyn(v: Any) -> Any:
    """`dyn(v)`: the value itself (it only tells the checker not to know its type)."""
    return v


# ---------------------------------------------------------------- strings


def _str(v: Any, fn: str) -> str:
    if isinstance(v, str):
        return v
    raise Undecidable(fn, f"expected a string, found {type_name(v)}")


def contains(s: Any, sub: Any) -> bool:
    """`s.contains(sub)`."""
    return _str(sub, "contains") in _str(s, "contains")


def starts_with(s: Any, prefix: Any) -> bool:
    """`s.startsWith(prefix)`."""
    return _str(s, "startsWith").startswith(_str(prefix, "startsWith"))


def ends_with(s: Any, suffix: Any) -> bool:
    """`s.endsWith(suffix)`."""
    return _str(s, "endsWith").endswith(_str(suffix, "endsWith"))


def lower_ascii(s: Any) -> str:
    """`s.lowerAscii()`: only A-Z change."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in _str(s, "lowerAscii"))


def upper_ascii(s: Any) -> str:
    """`s.upperAscii()`: only a-z change."""
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in _str(s, "upperAscii"))


def trim(s: Any) -> str:
    """`s.trim()`: leading and trailing white space removed."""
    return _str(s, "trim").strip()


def compile_pattern(p: str) -> Pattern:
    """The compiled pattern (textpattern's linear-time engine, cached there); a pattern outside its
    language is undecidable (the compiler refuses such a rule, SC710)."""
    try:
        return textpattern.compile_pattern(p)
    except textpattern.PatternError as exc:
        raise Undecidable("matches", f"bad pattern {p!r}: {exc.message} (column {exc.column})") from None


def matches(s: Any, pattern: Any) -> bool:
    """`s.matches(re)`: the pattern is found anywhere in s. The same engine as the `MATCHES`
    success operator (runtime/compiled/textpattern.py): a Thompson NFA, linear in the text whatever the
    pattern, so the verdict never depends on how loaded the machine is."""
    text, pat = _str(s, "matches"), _str(pattern, "matches")
    return compile_pattern(pat).search(text)
