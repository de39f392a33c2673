"""Value helpers shared by generated modules and the runtime: the absent value (MISSING), "has a
value" (§5.3), canonical JSON, USER text matching (docs/interpretations.md: USER provenance), the comparison rules of
§6.1 and the emptiness and counting rules of §6.3. Depends on nothing else of skillc."""
from __future__ import annotations

import copy
import json
import math
import re
import unicodedata
from decimal import Decimal
from typing import Any


class _Missing:
    """The absence of a value (distinct from JSON null)."""

    _instance: "_Missing | None" = None

    def __new__(cls) -> "_Missing":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()

# ---------------------------------------------------------------- values


def has_value(v: Any) -> bool:
    """An argument "has a value" (§5.3): present, not null, not an empty string."""
    return v is not MISSING and v is not None and v != ""


_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str).encode


def canonical(value: Any) -> str:
    """Canonical JSON text of a value (sorted keys, no spaces): fingerprints, idempotency, equality."""
    return _CANONICAL(value)


def normalize_text(value: Any) -> str:
    """USER matching text (docs/interpretations.md: USER provenance): NFKC, all whitespace removed, lower case."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = unicodedata.normalize("NFKC", text)
    return "".join(text.split()).lower()


def value_or_none(v: Any) -> Any:
    """None for MISSING, the value otherwise (error paths of §6.2 that are absent)."""
    return None if v is MISSING else v


def deep_copy(value: Any) -> Any:
    """A deep copy of a JSON-like value (verify arguments must not alias the write's request)."""
    return copy.deepcopy(value)


def json_value(text: str) -> Any:
    """A contract constant too deeply nested for a Python literal, carried as JSON text."""
    return json.loads(text)


def enum_key(value: Any) -> tuple[Any, ...]:
    """A hashable key with exact JSON equality (`1`, `1.0`, `true` and `"1"` all differ), for the
    `enum` sets of generated code (§5.3 step 5): scalars by kind, containers by canonical JSON."""
    if value is None:
        return ("n", None)
    cls = type(value)
    if cls is str:
        return ("s", value)
    if cls is bool:
        return ("b", value)
    if cls is int:
        return ("i", value)
    if cls is float:
        return ("f", value)
    return ("j", canonical(value))


# ---------------------------------------------------------------- comparisons (§6.1)


_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _number(v: Any) -> Decimal | None:
    """The exact decimal value of a number or of plain decimal text, else None (§6.1 EQ).

    Exact (not float): "9007199254740993" and 9007199254740992 are different numbers. Only plain
    decimal text converts: Python's float() would also take "1_000", "inf", "nan" and non-ASCII
    digits, which are text, not numbers.
    """
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return Decimal(v)
    if isinstance(v, float):
        return Decimal(repr(v)) if math.isfinite(v) else None
    if isinstance(v, str):
        text = v.strip()
        if not _DECIMAL.fullmatch(text):
            return None
        return Decimal(text)
    return None


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if v is MISSING:
        return ""
    return json.dumps(v, ensure_ascii=False, sort_keys=True)


def op_eq(actual: Any, expected: Any) -> bool:
    """EQ: numerically when both sides convert to numbers ("200" == 200), else as strings."""
    if actual is MISSING:
        return False
    if type(actual) is int and type(expected) is int:  # the common `code == 200`, exactly
        return actual == expected
    a, b = _number(actual), _number(expected)
    if a is not None and b is not None:
        return a == b
    return _text(actual) == _text(expected)


def op_ne(actual: Any, expected: Any) -> bool:
    """NE: the negation of EQ (a missing value is "not equal")."""
    return not op_eq(actual, expected)


def op_in(actual: Any, options: Any) -> bool:
    """IN: EQ to one of the listed values."""
    return isinstance(options, list) and any(op_eq(actual, o) for o in options)


def op_not_in(actual: Any, options: Any) -> bool:
    """NOT_IN: EQ to none of the listed values."""
    return not op_in(actual, options)


def op_truthy(actual: Any) -> bool:
    """TRUTHY: not null/false/0/""/"0"/"false", not an empty container."""
    if actual is MISSING or actual is None or actual is False:
        return False
    if isinstance(actual, (int, float)) and not isinstance(actual, bool):
        return actual != 0
    if isinstance(actual, str):
        return actual not in ("", "0", "false")
    if isinstance(actual, (list, dict)):
        return len(actual) > 0
    return True


def op_exists(actual: Any) -> bool:
    """EXISTS: the path is present (null counts)."""
    return actual is not MISSING


def is_empty_response(response: Any) -> bool:
    """An empty response (docs/interpretations.md: Empty response): null, {}, [] or ""."""
    return response is None or response is MISSING or response == {} or response == [] or response == ""


# ---------------------------------------------------------------- emptiness and counting (§6.3)


def count_items(sub: Any, fields: tuple[str, ...]) -> int:
    """Array -> its length; object -> 1 if it has content (any of `fields` when given), else 0."""
    if isinstance(sub, list):
        return len(sub)
    if isinstance(sub, dict):
        if fields:
            return 1 if any(has_value(sub.get(f, MISSING)) and sub.get(f) != [] for f in fields) else 0
        return 1 if sub else 0
    if sub is MISSING or sub is None or sub == "":
        return 0
    return 1


def default_empty(response: Any) -> bool:
    """No extracts configured: empty by the response's structure (null/{}/[]/"", or an empty `data`)."""
    if is_empty_response(response):
        return True
    if isinstance(response, dict) and "data" in response:
        return is_empty_response(response["data"])
    return False
