"""The face compiled rule code imports (`from skillc.runtime import cel`): CEL's values and
operators (docs/reference/rules.md) in four focused modules, re-exported under one name.

Generated rule functions are straight-line Python over these helpers: `cel.eq(a, b)`,
`cel.select(order, "status", "order.status")`, `cel.and_(lambda: …, lambda: …)`. Values are
JSON's (None, bool, int, float, str, list, dict) plus `datetime` (timestamp), `timedelta`
(duration) and `Decimal` (exact decimal). Anything that cannot be decided — a missing field or
record, an operator on the wrong kinds of value, a division by zero, an int64 overflow — raises
`Undecidable`, which names what was missing. Imports nothing of the compiler. Names here are a
promise to compiled modules: remove one only with a codegen change.
"""
from __future__ import annotations

from skillc.runtime.compiled.cel_logic import (
    SKIPPED, all_, and_, exists, exists_one, filter_, has, index, items, make_map, map_, max_, min_, not_, or_, result,
    select, size, sum_, truth,
)
from skillc.runtime.compiled.cel_text import (
    compile_pattern, contains, dyn, ends_with, lower_ascii, matches, starts_with, to_bool, to_double,
    to_int, to_string, trim, upper_ascii,
)
from skillc.runtime.compiled.cel_time import dur_part, duration, format_duration, format_timestamp, timestamp, ts_part
from skillc.runtime.compiled.cel_values import (
    INT64_MAX, INT64_MIN, MAX_DURATION, PLAIN_KINDS, Undecidable, add, div, eq, ge, gt, in_, le, lt, mod, mul, ne, neg, sub,
    to_decimal, type_name,
)

__all__ = [
    "INT64_MAX", "INT64_MIN", "MAX_DURATION", "PLAIN_KINDS", "SKIPPED", "Undecidable", "add", "all_", "and_",
    "compile_pattern", "contains", "div", "dur_part", "duration", "dyn", "ends_with", "eq", "exists", "exists_one",
    "filter_", "format_duration", "format_timestamp", "ge", "gt", "has", "in_", "index", "items", "le", "lower_ascii", "lt",
    "make_map", "map_", "matches", "max_", "min_", "mod", "mul", "ne", "neg", "not_", "or_", "result", "select", "size",
    "starts_with", "sub", "sum_", "timestamp", "to_bool", "to_decimal", "to_double", "to_int", "to_string", "trim",
    "truth", "ts_part", "type_name", "upper_ascii",
]
