"""The values and operators compiled rule code runs on (CEL semantics, docs/reference/rules.md).

Generated rule functions are straight-line Python over these helpers: `cel.eq(a, b)`,
`cel.select(order, "status", "order.status")`, `cel.and_(lambda: …, lambda: …)`. Values are
JSON's (None, bool, int, float, str, list, dict) plus `datetime` (timestamp), `timedelta`
(duration) and `Decimal` (exact decimal). Anything that cannot be decided — a missing field or
record, an operator on the wrong kinds of value, a division by zero, an int64 overflow — raises
`Undecidable`, which names what was missing; `&&`, `||` and the macros absorb it as CEL does
(`false && x` is false whatever x is). Imports nothing of the compiler.
"""
from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Callable, Iterable
from zoneinfo import ZoneInfo

import regex

from skillc.runtime.errors import SkillcError

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
# CEL's ranges: timestamps 0001-01-01..9999-12-31; durations those of a 64-bit count of
# nanoseconds (about ±292 years), as CEL's implementations hold them.
MAX_DURATION = timedelta(microseconds=INT64_MAX // 1000)
MATCH_TIMEOUT = 0.05  # seconds a `matches` may take; past that the rule is undecidable
SKIPPED = None  # what a rule function returns when its `when` guard does not apply


class Undecidable(SkillcError):
    """A rule value that cannot be decided: `what` names the expression or name, `why` the cause."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"{what}: {why}")
        self.what = what
        self.why = why


# ---------------------------------------------------------------- kinds of value


def type_name(v: Any) -> str:
    """The CEL type name of a value, for messages."""
    if v is None:
        return "null"
    if v is True or v is False:
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, Decimal):
        return "decimal"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, datetime):
        return "timestamp"
    if isinstance(v, timedelta):
        return "duration"
    return type(v).__name__


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
    if t is int:
        return Decimal(v)
    if t is float:
        if math.isnan(v) or math.isinf(v):
            raise Undecidable(what, f"{v} is not a decimal number")
        return _float_decimal(v)
    if isinstance(v, str):
        try:
            d = Decimal(v.strip())
        except InvalidOperation:
            raise Undecidable(what, f"{v!r} is not a decimal number") from None
        if not d.is_finite():
            raise Undecidable(what, f"{v!r} is not a decimal number")
        return d
    raise Undecidable(what, f"a {type_name(v)} is not a number")


@lru_cache(maxsize=4096)
def _float_decimal(v: float) -> Decimal:
    """A finite double as the decimal of its shortest text (prices recur: kept for reuse)."""
    return Decimal(repr(v))


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
    if ta is type(b) and (ta is int or ta is float or ta is str):  # the common cases, first (NaN: false)
        return a < b
    return _order("<", a, b) == -1


def le(a: Any, b: Any) -> bool:
    """`a <= b`."""
    ta = type(a)
    if ta is type(b) and (ta is int or ta is float or ta is str):  # the common cases, first (NaN: false)
        return a <= b
    return _order("<=", a, b) in (-1, 0)


def gt(a: Any, b: Any) -> bool:
    """`a > b`."""
    ta = type(a)
    if ta is type(b) and (ta is int or ta is float or ta is str):  # the common cases, first (NaN: false)
        return a > b
    return _order(">", a, b) == 1


def ge(a: Any, b: Any) -> bool:
    """`a >= b`."""
    ta = type(a)
    if ta is type(b) and (ta is int or ta is float or ta is str):  # the common cases, first (NaN: false)
        return a >= b
    return _order(">=", a, b) in (0, 1)


_ABSENT = object()


def _map_get(m: dict, key: Any) -> Any:
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


# ---------------------------------------------------------------- logic


def truth(v: Any, what: str = "condition") -> bool:
    """A value used as a condition: must be a bool."""
    if v is True or v is False:
        return v
    raise Undecidable(what, f"expected a bool, found {type_name(v)}")


def not_(v: Any) -> bool:
    """`!v`."""
    return not truth(v, "!")


def and_(left: Callable[[], Any], right: Callable[[], Any]) -> bool:
    """`left && right`: false if either side is false, even when the other cannot be decided."""
    try:
        a = left()
    except Undecidable as exc:
        a = exc
    if a is False:
        return False
    try:
        b = right()
    except Undecidable as exc:
        b = exc
    if b is False:
        return False
    if a is True and b is True:
        return True
    for v in (a, b):
        if isinstance(v, Undecidable):
            raise v
    raise _no_op("&&", a, b)


def or_(left: Callable[[], Any], right: Callable[[], Any]) -> bool:
    """`left || right`: true if either side is true, even when the other cannot be decided."""
    try:
        a = left()
    except Undecidable as exc:
        a = exc
    if a is True:
        return True
    try:
        b = right()
    except Undecidable as exc:
        b = exc
    if b is True:
        return True
    if a is False and b is False:
        return False
    for v in (a, b):
        if isinstance(v, Undecidable):
            raise v
    raise _no_op("||", a, b)


def result(v: Any) -> bool:
    """A rule's value: true or false (anything else cannot be decided)."""
    return truth(v, "rule")


# ---------------------------------------------------------------- access


def select(obj: Any, field: str, what: str) -> Any:
    """`obj.field`: a member of a map (a JSON object); `what` is the text, for the message."""
    if isinstance(obj, dict):
        v = obj.get(field, _ABSENT)
        if v is _ABSENT:
            raise Undecidable(what, "no such field")
        return v
    raise Undecidable(what, f"a {type_name(obj)} has no fields")


def has(obj: Any, field: str, what: str) -> bool:
    """`has(obj.field)`: whether the map holds the field (null counts as present)."""
    if isinstance(obj, dict):
        return field in obj
    raise Undecidable(what, f"a {type_name(obj)} has no fields")


def index(obj: Any, key: Any, what: str) -> Any:
    """`obj[key]`: a list item by int (or an integral double), a map value by key."""
    if isinstance(obj, list):
        if type(key) is float and key.is_integer():
            key = int(key)
        if isinstance(key, Decimal) and key == key.to_integral_value():
            key = int(key)
        if not _is_int(key):
            raise Undecidable(what, f"a list index must be an int, found {type_name(key)}")
        if not 0 <= key < len(obj):
            raise Undecidable(what, f"index {key} out of range (size {len(obj)})")
        return obj[key]
    if isinstance(obj, dict):
        if not (type(key) in (str, int, bool) or _is_num(key)):
            raise Undecidable(what, f"a {type_name(key)} cannot be a map key")
        v = _map_get(obj, key)
        if v is _ABSENT:
            raise Undecidable(what, f"no such key {key!r}")
        return v
    raise Undecidable(what, f"a {type_name(obj)} cannot be indexed")


def make_map(entries: Iterable[tuple[Any, Any]]) -> dict:
    """`{k: v, …}`: keys are strings, ints or bools; a repeated key cannot be decided."""
    out: dict = {}
    for k, v in entries:
        if not (type(k) in (str, int, bool)):
            raise Undecidable("{…}", f"a {type_name(k)} cannot be a map key")
        if _map_get(out, k) is not _ABSENT:
            raise Undecidable("{…}", f"repeated map key {k!r}")
        out[k] = v
    return out


def size(v: Any) -> int:
    """`size(v)`: characters of a string, items of a list, entries of a map."""
    if isinstance(v, (str, list, dict)):
        return len(v)
    raise Undecidable("size", f"a {type_name(v)} has no size")


# ---------------------------------------------------------------- macros


def _items(coll: Any, macro: str) -> list:
    if isinstance(coll, list):
        return coll
    if isinstance(coll, dict):
        return list(coll)
    raise Undecidable(macro, f"a {type_name(coll)} is not a list or map")


def all_(coll: Any, pred: Callable[[Any], Any]) -> bool:
    """`coll.all(x, p)`: false if any item is false (even when another cannot be decided)."""
    err: Undecidable | None = None
    for item in _items(coll, "all"):
        try:
            v = pred(item)
        except Undecidable as exc:
            v = exc
        if v is False:
            return False
        if v is not True:
            err = err or (v if isinstance(v, Undecidable) else _no_op("all", v))
    if err is not None:
        raise err
    return True


def exists(coll: Any, pred: Callable[[Any], Any]) -> bool:
    """`coll.exists(x, p)`: true if any item is true (even when another cannot be decided)."""
    err: Undecidable | None = None
    for item in _items(coll, "exists"):
        try:
            v = pred(item)
        except Undecidable as exc:
            v = exc
        if v is True:
            return True
        if v is not False:
            err = err or (v if isinstance(v, Undecidable) else _no_op("exists", v))
    if err is not None:
        raise err
    return False


def exists_one(coll: Any, pred: Callable[[Any], Any]) -> bool:
    """`coll.exists_one(x, p)`: exactly one item is true."""
    return sum(1 for item in _items(coll, "exists_one") if truth(pred(item), "exists_one")) == 1


def filter_(coll: Any, pred: Callable[[Any], Any]) -> list:
    """`coll.filter(x, p)`: the items (map keys) for which p is true."""
    return [item for item in _items(coll, "filter") if truth(pred(item), "filter")]


def map_(coll: Any, fn: Callable[[Any], Any], pred: Callable[[Any], Any] | None = None) -> list:
    """`coll.map(x, e)` and `coll.map(x, p, e)` (only the items for which p is true)."""
    items = _items(coll, "map")
    if pred is not None:
        items = [i for i in items if truth(pred(i), "map")]
    return [fn(i) for i in items]


# ---------------------------------------------------------------- numbers


def sum_(coll: Any) -> Any:
    """`sum(list)`: 0 for an empty list; ints stay ints, any double makes a double, any decimal a
    decimal (exact)."""
    items = coll if isinstance(coll, list) else _bad_list("sum", coll)
    kinds = {type(v) for v in items}
    if len(kinds) == 1 and (Decimal in kinds or float in kinds):  # one kind: Python's own sum is exact enough
        return sum(items, Decimal(0) if Decimal in kinds else 0.0)
    total: Any = 0
    for v in items:
        if not _is_num(v):
            raise Undecidable("sum", f"a {type_name(v)} is not a number")
        total = add(total, v)
    return total


def _bad_list(fn: str, v: Any) -> list:
    raise Undecidable(fn, f"expected a list, found {type_name(v)}")


def min_(coll: Any) -> Any:
    """`min(list)`: the smallest item (undecidable for an empty list)."""
    items = coll if isinstance(coll, list) else _bad_list("min", coll)
    if not items:
        raise Undecidable("min", "empty list")
    best = items[0]
    for v in items[1:]:
        if lt(v, best):
            best = v
    return best


def max_(coll: Any) -> Any:
    """`max(list)`: the largest item (undecidable for an empty list)."""
    items = coll if isinstance(coll, list) else _bad_list("max", coll)
    if not items:
        raise Undecidable("max", "empty list")
    best = items[0]
    for v in items[1:]:
        if gt(v, best):
            best = v
    return best


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


# ---------------------------------------------------------------- timestamps and durations

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_TS = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})", re.ASCII)
_DUR_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|us|µs|ns|h|m|s)", re.ASCII)
_DUR_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def timestamp(v: Any) -> datetime:
    """`timestamp(text)` (RFC 3339, e.g. '2026-05-01T10:00:00Z') or `timestamp(epoch seconds)`."""
    if isinstance(v, datetime):
        return v
    if _is_int(v):
        try:
            return _EPOCH + timedelta(seconds=v)
        except OverflowError:
            raise Undecidable("timestamp", "out of range") from None
    if not isinstance(v, str):
        raise Undecidable("timestamp", f"a {type_name(v)} is not a timestamp")
    m = _TS.fullmatch(v.strip())
    if m is None:
        raise Undecidable("timestamp", f"{v!r} is not an RFC 3339 timestamp")
    year, month, day, hour, minute, second, frac, zone = m.groups()
    frac = frac or ""
    if frac[6:].strip("0"):
        raise Undecidable("timestamp", f"{v!r}: finer than microseconds is not supported")
    micros = int((frac + "000000")[:6])
    tz = timezone.utc
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    try:
        out = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micros, tzinfo=tz)
        return out.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise Undecidable("timestamp", f"{v!r} is not a valid time") from None


def duration(v: Any) -> timedelta:
    """`duration(text)`: a signed sequence of numbers with units h, m, s, ms, us, ns ('24h', '1h30m')."""
    if isinstance(v, timedelta):
        return v
    if not isinstance(v, str):
        raise Undecidable("duration", f"a {type_name(v)} is not a duration")
    text = v.strip()
    sign = -1 if text.startswith("-") else 1
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return timedelta(0)
    pos, total_ns = 0, 0
    while pos < len(body):
        m = _DUR_PART.match(body, pos)
        if m is None:
            raise Undecidable("duration", f"{v!r} is not a duration (e.g. '24h', '1h30m', '1.5s')")
        total_ns += int(Decimal(m.group(1)) * Decimal(repr(_DUR_UNIT[m.group(2)])) * 10 ** 9)
        pos = m.end()
    if not body:
        raise Undecidable("duration", f"{v!r} is not a duration")
    if total_ns % 1000:
        raise Undecidable("duration", f"{v!r}: finer than microseconds is not supported")
    return _dur(timedelta(microseconds=sign * total_ns // 1000), "duration")


def format_timestamp(t: datetime) -> str:
    """RFC 3339 text in UTC, with the fraction only when there is one."""
    u = t.astimezone(timezone.utc)
    frac = f".{u.microsecond:06d}".rstrip("0") if u.microsecond else ""
    return u.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z"


def format_duration(d: timedelta) -> str:
    """Seconds with a fraction when needed, as CEL prints a duration ('90s', '1.5s')."""
    micros = d // timedelta(microseconds=1)
    sign = "-" if micros < 0 else ""
    whole, frac = divmod(abs(micros), 1_000_000)
    return f"{sign}{whole}" + (f".{frac:06d}".rstrip("0") if frac else "") + "s"


@lru_cache(maxsize=64)
def _zone(name: str) -> Any:
    m = re.fullmatch(r"([+-])?(\d{2}):(\d{2})", name)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    try:
        return ZoneInfo(name)
    except (ValueError, KeyError, OSError):
        raise Undecidable("time zone", f"unknown time zone {name!r}") from None


def _local(t: Any, tz: Any, fn: str) -> datetime:
    if not isinstance(t, datetime):
        raise Undecidable(fn, f"a {type_name(t)} is not a timestamp")
    if tz is None:
        return t.astimezone(timezone.utc)
    if not isinstance(tz, str):
        raise Undecidable(fn, f"a time zone is a string, found {type_name(tz)}")
    return t.astimezone(_zone(tz))


def ts_part(t: Any, part: str, tz: Any = None) -> int:
    """A timestamp's calendar field (`getFullYear`, `getMonth` 0-based, `getDate` 1-based,
    `getDayOfMonth` 0-based, `getDayOfWeek` 0 = Sunday, `getDayOfYear` 0-based, `getHours`,
    `getMinutes`, `getSeconds`, `getMilliseconds`), in UTC or in the zone given."""
    if isinstance(t, timedelta) and tz is None:
        return dur_part(t, part)
    lt_ = _local(t, tz, part)
    if part == "getFullYear":
        return lt_.year
    if part == "getMonth":
        return lt_.month - 1
    if part == "getDate":
        return lt_.day
    if part == "getDayOfMonth":
        return lt_.day - 1
    if part == "getDayOfWeek":
        return (lt_.weekday() + 1) % 7
    if part == "getDayOfYear":
        return lt_.timetuple().tm_yday - 1
    if part == "getHours":
        return lt_.hour
    if part == "getMinutes":
        return lt_.minute
    if part == "getSeconds":
        return lt_.second
    if part == "getMilliseconds":
        return lt_.microsecond // 1000
    raise Undecidable(part, "not a timestamp function")


def dur_part(d: Any, part: str) -> int:
    """A duration's length in whole hours, minutes, seconds or milliseconds (`getHours`, …)."""
    if not isinstance(d, timedelta):
        raise Undecidable(part, f"a {type_name(d)} is not a duration")
    micros = d // timedelta(microseconds=1)
    unit = {"getHours": 3_600_000_000, "getMinutes": 60_000_000, "getSeconds": 1_000_000,
            "getMilliseconds": 1000}.get(part)
    if unit is None:
        raise Undecidable(part, "not a duration function")
    q = abs(micros) // unit
    if part == "getMilliseconds":
        q = (abs(micros) // 1000) % 1000
    return q if micros >= 0 else -q


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


@lru_cache(maxsize=256)
def _pattern(p: str) -> Any:
    try:
        return regex.compile(p, regex.V0)
    except regex.error as exc:
        raise Undecidable("matches", f"bad pattern {p!r}: {exc}") from None


def matches(s: Any, pattern: Any) -> bool:
    """`s.matches(re)`: the pattern is found anywhere in s (RE2's syntax; the compiler refuses
    backreferences and lookaround). Bounded in time: a match that runs too long is undecidable."""
    text, pat = _str(s, "matches"), _str(pattern, "matches")
    try:
        return _pattern(pat).search(text, timeout=MATCH_TIMEOUT) is not None
    except TimeoutError:
        raise Undecidable("matches", "the pattern took too long on this text") from None
