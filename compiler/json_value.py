"""A contract's JSON value with the span of every part (`J`): what `jsonc` parses text into, and
what `parse` reads the IR from and `studio_border` checks at the border."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skillc.compiler import ir


@dataclass(slots=True)
class J:
    """A JSON value with its span. `value`: list of (key, key_span, J) for objects, list of J for
    arrays, the Python value for scalars."""

    kind: str  # object | array | string | number | bool | null
    value: Any
    span: ir.Span
