"""CEL's values and operators for compiled rule code: kinds of value, exact decimals, arithmetic,
comparison and `in` (docs/reference/rules.md). Anything that cannot be decided raises
`Undecidable`, naming what was missing or wrong. Generated code reaches these through
`skillc.runtime.cel`.
"""
from __future__ import annotations

import math
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from skillc.runtime.words.errors import SkillcError

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
# CEL's ranges: timestamps 0001-01-01..9999-12-31; durations those of a 64-bit count of
# nanoseconds (about ±292 years), as CEL's implementations hold them.
MAX_DURATION = timedelta(microseconds=INT64_MAX // 1000)


class Undecidable(SkillcError):
    """A rule value that cannot be decided: `what` names the expression or name, `why` the cause."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"{what}: {why}")
        self.what = what
        self.why = why


# ---------------------------------------------------------------- kinds of value


_TYPE_NAMES: dict[type, str] = {type(None): "null", bool: "bool", int: "int", float: "double", Decimal: "decimal",
                                str: "string", list: "list", dict: "map", datetime: "timestamp", timedelta: "duration"}


def type_name(v: Any) -> str:
    """The CEL type name of a value, for messages."""
    return _TYPE_NAMES.get(type(v), type(v).__name__)


def _is_int(v: Any) -> bool:
    return type(v) is int


def _is_num(v: Any) -> bool:
    return type(v) in (int, float) or isinstance(v, Decimal)


def _no_op(op: str, *vals: Any) -> Undecidable:
    kinds = " and ".join(type_name(v) for v in vals)
    return Undecidable(op, f"no operator {op} for {kinds}")


def _int64(v: int, op: str) -> int:
    if not INT64_MIN <= v <= INT64_MAX:
        raise Undecidable(op, "integer overflow (beyond 64 bits)")
    return v


def _dur(v: timedelta, op: str) -> timedelta:
    if abs(v) > MAX_DURATION:
        raise Undecidable(op, "duration out of range")
    return v


def to_decimal(v: Any, what: str = "decimal()") -> Decimal:
    """A number or numeric text as an exact decimal: a JSON double by its shortest text
    (12.34 -> Decimal('12.34'), never the binary expansion), an int exactly."""
    t = type(v)
    if t is Decimal:
        return v
    if t is float:
        hit = _FLOATS.get(v)
        if hit is not None:
            return hit
        if math.isnan(v) or math.isinf(v):
            raise Undecidable(what, f"{v} is not a decimal number")
        return _float_decimal(v)
    if t is int:
        hit = _INTS.get(v)
        if hit is None:
            if len(_INTS) >= 4096:
                _INTS.clear()
            hit = _INTS[v] = Decimal(v)
        return hit
    if isinstance(v, str):
        try:
            d = Decimal(v.strip())
        except InvalidOperation:
            raise Undecidable(what, f"{v!r} is not a decimal number") from None
        if not d.is_finite():
            raise Undecidable(what, f"{v!r} is not a decimal number")
        return d
    raise Undecidable(what, f"a {type_name(v)} is not a number")


_FLOATS: dict[float, Decimal] = {}  # finite nonzero doubles seen -> their decimals (prices recur)
_INTS: dict[int, Decimal] = {}  # ints seen -> their decimals (kept apart: 10 and 10.0 are one key, two decimals)


def _float_decimal(v: float) -> Decimal:
    """A finite double as the decimal of its shortest text, kept for reuse (bounded). Zero is not
    kept: 0.0 and -0.0 are one dict key but two decimals."""
    d = Decimal(repr(v))
    if v:
        if len(_FLOATS) >= 4096:
            _FLOATS.clear()
        _FLOATS[v] = d
    return d


def _promote(a: Any, b: Any) -> tuple[Any, Any, str]:
    """Two numbers brought to one kind: int, double, or decimal when either is a decimal."""
    ta, tb = type(a), type(b)
    if ta is tb:
        return a, b, _KIND[ta]
    if ta is int and tb is int:
        return a, b, "int"
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return to_decimal(a), to_decimal(b), "decimal"
    return float(a), float(b), "double"


# ---------------------------------------------------------------- arithmetic

_KIND = {int: "int", float: "double", Decimal: "decimal"}


def add(a: Any, b: Any) -> Any:
    """`a + b`: numbers, strings, lists, timestamp + duration, duration + duration."""
    ta = type(a)
    if ta is type(b) and (ta is Decimal or ta is float or ta is str):  # the common cases, first
        return a + b
    if _is_num(a) and _is_num(b):
        x, y, kind = _promote(a, b)
        return _int64(x + y, "+") if kind == "int" else x + y
    if isinstance(a, str) and isinstance(b, str):
        return a + b
    if isinstance(a, list) and isinstance(b, list):
        return a + b
    try:
        if isinstance(a, timedelta) and isinstance(b, timedelta):
            return _dur(a + b, "+")
        if isinstance(a, datetime) and isinstance(b, timedelta):
            return a + b
        if isinstance(a, timedelta) and isinstance(b, datetime):
            return b + a
    except OverflowError:
        raise Undecidable("+", "timestamp out of range") from None
    raise _no_op("+", a, b)


def sub(a: Any, b: Any) -> Any:
    """`a - b`: numbers, timestamp - timestamp (a duration), timestamp/duration - duration."""
    if _is_num(a) and _is_num(b):
        x, y, kind = _promote(a, b)
        return _int64(x - y, "-") if kind == "int" else x - y
    try:
        if isinstance(a, datetime) and isinstance(b, datetime):
            return _dur(a - b, "-")
        if isinstance(a, datetime) and isinstance(b, timedelta):
            return a - b
        if isinstance(a, timedelta) and isinstance(b, timedelta):
            return _dur(a - b, "-")
    except OverflowError:
        raise Undecidable("-", "timestamp out of range") from None
    raise _no_op("-", a, b)


def mul(a: Any, b: Any) -> Any:
    """`a * b` on numbers."""
    if _is_num(a) and _is_num(b):
        x, y, kind = _promote(a, b)
        return _int64(x * y, "*") if kind == "int" else x * y
    raise _no_op("*", a, b)


def div(a: Any, b: Any) -> Any:
    """`a / b`: ints truncate toward zero; doubles follow IEEE (1.0 / 0.0 is +inf)."""
    if _is_num(a) and _is_num(b):
        x, y, kind = _promote(a, b)
        if kind == "int":
            if y == 0:
                raise Undecidable("/", "division by zero")
            q = abs(x) // abs(y)
            return _int64(q if (x >= 0) == (y >= 0) else -q, "/")
        if kind == "decimal":
            if y == 0:
                raise Undecidable("/", "division by zero")
            return x / y
        if y == 0:
            return math.nan if x == 0 or math.isnan(x) else math.copysign(math.inf, x) * math.copysign(1.0, y)
        return x / y
    raise _no_op("/", a, b)


def mod(a: Any, b: Any) -> Any:
    """`a % b` on ints (the sign of the dividend, as in C) and decimals."""
    if _is_int(a) and _is_int(b):
        if b == 0:
            raise Undecidable("%", "modulus by zero")
        r = abs(a) % abs(b)
        return r if a >= 0 else -r
    if (isinstance(a, Decimal) or isinstance(b, Decimal)) and _is_num(a) and _is_num(b):
        x, y = to_decimal(a), to_decimal(b)
        if y == 0:
            raise Undecidable("%", "modulus by zero")
        return x % y
    raise _no_op("%", a, b)


def neg(a: Any) -> Any:
    """`-a` on numbers and durations."""
    if _is_int(a):
        return _int64(-a, "-")
    if type(a) is float or isinstance(a, Decimal):
        return -a
    if isinstance(a, timedelta):
        return -a
    raise Undecidable("-", f"no operator - for {type_name(a)}")


# ---------------------------------------------------------------- comparison


# the kinds whose `==` is Python's between two values of one kind (generated code compares two
# such values with Python's operator: cel.eq's first case)
PLAIN_KINDS = (str, int, bool)


def eq(a: Any, b: Any) -> bool:
    """`a == b`: numbers by value across int, double and decimal; lists and maps member by member;
    other values of different kinds are never equal (no error)."""
    ta = type(a)
    if ta is type(b) and (ta is str or ta is int or ta is bool or ta is float or ta is Decimal):  # common cases first
        return a == b
    if _is_num(a) and _is_num(b):
        if isinstance(a, Decimal) or isinstance(b, Decimal):
            if (type(a) is float and not math.isfinite(a)) or (type(b) is float and not math.isfinite(b)):
                return False
            return to_decimal(a) == to_decimal(b)
        if type(a) is not type(b):
            return float(a) == float(b)
        return bool(a == b)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(eq(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        for k, v in a.items():
            hit = _map_get(b, k)
            if hit is _ABSENT or not eq(v, hit):
                return False
        return True
    if type(a) is not type(b) and not (isinstance(a, datetime) and isinstance(b, datetime)):
        return False
    return bool(a == b)


def ne(a: Any, b: Any) -> bool:
    """`a != b`."""
    return not eq(a, b)


def _rank(v: Any) -> Any:
    """A number as something comparable with any other: a non-finite double stays a float, a
    finite one meets a decimal as its exact decimal."""
    return v if type(v) is not float or not math.isfinite(v) else to_decimal(v)


def _order(op: str, a: Any, b: Any) -> int:
    """-1, 0 or 1 for a < b, a == b, a > b; 2 when unordered (a NaN)."""
    if _is_num(a) and _is_num(b):
        if (type(a) is float and math.isnan(a)) or (type(b) is float and math.isnan(b)):
            return 2
        if isinstance(a, Decimal) or isinstance(b, Decimal):
            x, y = _rank(a), _rank(b)
        elif type(a) is not type(b):  # an int meets a double as a double, as CEL compares them
            x, y = float(a), float(b)
        else:
            x, y = a, b
        if isinstance(x, Decimal) != isinstance(y, Decimal):  # one side an infinity
            x, y = float(x), float(y)
        return -1 if x < y else (1 if x > y else 0)
    same = ((isinstance(a, str) and isinstance(b, str)) or (type(a) is bool and type(b) is bool)
            or (isinstance(a, datetime) and isinstance(b, datetime))
            or (isinstance(a, timedelta) and isinstance(b, timedelta)))
    if not same:
        raise _no_op(op, a, b)
    return -1 if a < b else (1 if a > b else 0)


def lt(a: Any, b: Any) -> bool:
    """`a < b`: numbers (across kinds), strings, bools, timestamps, durations."""
    ta = type(a)
    if ta is type(b) and (ta is int or ta is float or ta is str or ta is Decimal):  # the common cases first
        return a < b  # (a NaN double: false, as CEL says; a decimal is always finite)
    return _order("<", a, b) == -1


def le(a: Any, b: Any) -> bool:
    """`a <= b`."""
    ta = type(a)
    if ta is type(b) and (ta is int or ta is float or ta is str or ta is Decimal):  # the common cases first
        return a <= b  # (a NaN double: false, as CEL says; a decimal is always finite)
    return _order("<=", a, b) in (-1, 0)


def gt(a: Any, b: Any) -> bool:
    """`a > b`."""
    ta = type(a)
    if ta is type(b) and (ta is int or ta is float or ta is str or ta is Decimal):  # the common cases first
        return a > b  # (a NaN double: false, as CEL says; a decimal is always finite)
    return _order(">", a, b) == 1


def ge(a: Any, b: Any) -> bool:
    """`a >= b`."""
    ta = type(a)
    if ta is type(b) and (ta is int or ta is float or ta is str or ta is Decimal):  # the common cases first
        return a >= b  # (a NaN double: false, as CEL says; a decimal is always finite)
    return _order(">=", a, b) in (0, 1)


_ABSENT = object()


def _map_get(m: dict[Any, Any], key: Any) -> Any:
    if type(key) in (str, bool) or key is None:
        return m.get(key, _ABSENT) if type(key) is not bool else next(
            (v for k, v in m.items() if type(k) is bool and k == key), _ABSENT)
    for k, v in m.items():
        if eq(k, key):
            return v
    return _ABSENT


def in_(a: Any, coll: Any) -> bool:
    """`a in list` (an equal member) or `a in map` (a key)."""
    if isinstance(coll, list):
        if type(a) is str:  # a string equals only a string: Python's own `in` says the same
            return a in coll
        return any(eq(a, x) for x in coll)
    if isinstance(coll, dict):
        return _map_get(coll, a) is not _ABSENT
    raise Undecidable("in", f"the right side of 'in' is a {type_name(coll)}, not a list or map")
