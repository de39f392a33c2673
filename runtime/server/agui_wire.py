"""AG-UI events as JSON text, built from plain dicts instead of one pydantic model per event.

A served turn emits some forty events; validating and dumping an `ag_ui.core` model for each cost
a fifth of the turn. The events here have a fixed shape, so their JSON is written directly, with
the wire names and the field order the package's models produce (`type`, `timestamp`, `metadata`,
then the event's own fields; a None field left out) and the same text for the same values, but
for one spelling: a float with an exponent is written 1e-7 where the package writes 1e-07 (the
same number to any JSON reader). The package stays the schema: tests/server/test_serve_agui_wire.py re-reads every event of an approval
round trip with the package's models and compares their encoding to these bytes.
"""
from __future__ import annotations

import time
from typing import Any

from ag_ui.core import EventType

from skillc.runtime.text import jsontext


def encode(kind: EventType, fields: dict[str, Any], metadata: dict[str, Any] | None = None) -> str:
    """One event's JSON text, stamped now; `fields` are wire names (camelCase) in the model's
    order, None values left out as the package leaves them out."""
    event: dict[str, Any] = {"type": kind.value, "timestamp": int(time.time() * 1000)}
    if metadata is not None:
        event["metadata"] = metadata
    for name, value in fields.items():
        if value is not None:
            event[name] = value
    return jsontext.dumps(event)


def encode_with_raw(kind: EventType, fields: dict[str, Any], name: str, raw: str) -> str:
    """`encode`, with one more field last whose value is given as JSON text already (a state
    snapshot: encoded once, not read back to be encoded again)."""
    head = encode(kind, fields)
    return f"{head[:-1]},{jsontext.dumps(name)}:{raw}}}"
