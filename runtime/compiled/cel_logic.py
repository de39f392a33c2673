"""CEL's logic, member access and macros for compiled rule code, plus skillc's `sum`, `min` and
`max` (docs/reference/rules.md). `&&`, `||`, `all` and `exists` absorb an undecidable side as
CEL does: `false && x` is false whatever x is.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, Iterable

from skillc.runtime.compiled.cel_values import _ABSENT, Undecidable, _is_int, _is_num, _map_get, _no_op, add, gt, lt, type_name

SKIPPED = None  # what a rule function returns when its `when` guard does not apply


# ---------------------------------------------------------------- logic


def truth(v: Any, what: str = "condition") -> bool:
    """A value used as a condition: must be a bool."""
    if v is True or v is False:
        return v
    raise Undecidable(what, f"expected a bool, found {type_name(v)}")


def not_(v: Any) -> bool:
    """`!v`."""
    return not truth(v, "!")


def _settle(sides: tuple[Any, Any], op: str) -> bool:
    """Neither side of `&&`/`||` decided it and they are not both bools: the first side's error,
    else no such operator for these kinds."""
    for v in sides:
        if isinstance(v, Undecidable):
            raise v
    raise _no_op(op, *sides)


def _junction(left: Callable[[], Any], right: Callable[[], Any], decisive: bool, op: str) -> bool:
    """`&&` (decisive False) and `||` (decisive True): a side that is `decisive` decides, even
    when the other cannot be decided; both the other bool give that bool; else `_settle`."""
    try:
        a = left()
    except Undecidable as exc:
        a = exc
    if a is decisive:
        return decisive
    try:
        b = right()
    except Undecidable as exc:
        b = exc
    if b is decisive:
        return decisive
    if a is (not decisive) and b is (not decisive):
        return not decisive
    return _settle((a, b), op)


def and_(left: Callable[[], Any], right: Callable[[], Any]) -> bool:
    """`left && right`: false if either side is false, even when the other cannot be decided;
    true if both are true; else the first side's error."""
    return _junction(left, right, False, "&&")


def or_(left: Callable[[], Any], right: Callable[[], Any]) -> bool:
    """`left || right`: true if either side is true, even when the other cannot be decided;
    false if both are false; else the first side's error."""
    return _junction(left, right, True, "||")


def result(v: Any) -> bool:
    """A rule's value: true or false (anything else cannot be decided)."""
    return truth(v, "rule")


# ---------------------------------------------------------------- access


def select(obj: Any, field: str, what: str) -> Any:
    """`obj.field`: a member of a map (a JSON object); `what` is the text, for the message."""
    if type(obj) is dict:  # the common case first: a JSON object holding the field
        try:
            return obj[field]
        except KeyError:
            raise Undecidable(what, "no such field") from None
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


def make_map(entries: Iterable[tuple[Any, Any]]) -> dict[Any, Any]:
    """`{k: v, …}`: keys are strings, ints or bools; a repeated key cannot be decided."""
    out: dict[Any, Any] = {}
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


def items(coll: Any, macro: str) -> list[Any]:
    """What a macro ranges over: a list's items, a map's keys (generated `map` and `filter`
    comprehensions iterate this)."""
    if type(coll) is list:
        return coll
    return _items(coll, macro)


def _items(coll: Any, macro: str) -> list[Any]:
    if isinstance(coll, list):
        return coll
    if isinstance(coll, dict):
        return list(coll)
    raise Undecidable(macro, f"a {type_name(coll)} is not a list or map")


def _quantified(coll: Any, pred: Callable[[Any], Any], stop: bool, macro: str) -> bool:
    """`all` (stop False) and `exists` (stop True): `stop` as soon as an item's condition is
    `stop`, even when another item's cannot be decided; else the first such error, or `not stop`."""
    err: Undecidable | None = None
    for item in coll if type(coll) is list else _items(coll, macro):
        try:
            v = pred(item)
        except Undecidable as exc:
            v = exc
        if v is stop:
            return stop
        if v is not (not stop):
            err = err or (v if isinstance(v, Undecidable) else _no_op(macro, v))
    if err is not None:
        raise err
    return not stop


def _over_list(coll: list[Any], pred: Callable[[Any], Any], stop: bool, macro: str) -> bool:
    """The common case of `all`/`exists` over a list, judged here without another call: `stop`
    at the first item that is `stop`, `not stop` when every item is `not stop`; an item that is
    neither (or cannot be decided) hands the rest to `_quantified`."""
    for i, item in enumerate(coll):
        try:
            v = pred(item)
        except Undecidable:
            return _quantified(coll[i:], pred, stop, macro)
        if v is stop:
            return stop
        if v is not (not stop):
            return _quantified(coll[i:], pred, stop, macro)
    return not stop


def all_(coll: Any, pred: Callable[[Any], Any]) -> bool:
    """`coll.all(x, p)`: false if any item is false (even when another cannot be decided)."""
    return _over_list(coll, pred, False, "all") if type(coll) is list else _quantified(coll, pred, False, "all")


def exists(coll: Any, pred: Callable[[Any], Any]) -> bool:
    """`coll.exists(x, p)`: true if any item is true (even when another cannot be decided)."""
    return _over_list(coll, pred, True, "exists") if type(coll) is list else _quantified(coll, pred, True, "exists")


def exists_one(coll: Any, pred: Callable[[Any], Any]) -> bool:
    """`coll.exists_one(x, p)`: exactly one item is true."""
    return sum(1 for item in _items(coll, "exists_one") if truth(pred(item), "exists_one")) == 1


def filter_(coll: Any, pred: Callable[[Any], Any]) -> list[Any]:
    """`coll.filter(x, p)`: the items (map keys) for which p is true."""
    return [item for item in _items(coll, "filter") if truth(pred(item), "filter")]


def map_(coll: Any, fn: Callable[[Any], Any], pred: Callable[[Any], Any] | None = None) -> list[Any]:
    """`coll.map(x, e)` and `coll.map(x, p, e)` (only the items for which p is true)."""
    items = coll if type(coll) is list else _items(coll, "map")
    if pred is not None:
        items = [i for i in items if truth(pred(i), "map")]
    return [fn(i) for i in items]


# ---------------------------------------------------------------- numbers


def sum_(coll: Any) -> Any:
    """`sum(list)`: 0 for an empty list; ints stay ints, any double makes a double, any decimal a
    decimal (exact)."""
    items = coll if isinstance(coll, list) else _bad_list("sum", coll)
    if items:
        kind = type(items[0])
        if kind is Decimal or kind is float:  # one kind throughout: Python's own sum is exact enough
            for v in items:
                if type(v) is not kind:
                    break
            else:
                return sum(items, _ZERO if kind is Decimal else 0.0)
    total: Any = 0
    for v in items:
        if not _is_num(v):
            raise Undecidable("sum", f"a {type_name(v)} is not a number")
        total = add(total, v)
    return total


_ZERO = Decimal(0)


def _bad_list(fn: str, v: Any) -> list[Any]:
    raise Undecidable(fn, f"expected a list, found {type_name(v)}")


def _extreme(coll: Any, better: Callable[[Any, Any], bool], fn: str) -> Any:
    """The item no other is `better` than, the first of equals (undecidable for an empty list)."""
    items = coll if isinstance(coll, list) else _bad_list(fn, coll)
    if not items:
        raise Undecidable(fn, "empty list")
    best = items[0]
    for v in items[1:]:
        if better(v, best):
            best = v
    return best


def min_(coll: Any) -> Any:
    """`min(list)`: the smallest item (undecidable for an empty list)."""
    return _extreme(coll, lt, "min")


def max_(coll: Any) -> Any:
    """`max(list)`: the largest item (undecidable for an empty list)."""
    return _extreme(coll, gt, "max")
