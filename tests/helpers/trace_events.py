"""Every written trace event is one of the typed events (runtime/words/event_types.py): validated
against the `TraceEvent` union by pydantic, strictly (a wrong type fails, no coercion) and with no
key the event's TypedDict does not declare. Events are checked as the file holds them (their JSON
line), so the check is the one a consumer reading a trace back relies on."""
from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Annotated, Any

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from skillc.runtime.text import jsontext
from skillc.runtime.words.event_types import TraceEvent

ALWAYS_STAMPED = ("seq", "session", "turn")


@cache
def adapter() -> TypeAdapter[Any]:
    """The union, told apart by `type`; strict, and a key the member does not declare fails."""
    return TypeAdapter(Annotated[TraceEvent, Field(discriminator="type")],
                       config=ConfigDict(extra="forbid", strict=True))


def problems(events: Iterable[dict[str, Any]]) -> list[str]:
    """One line per event that is not a valid `TraceEvent` (empty when all are)."""
    found = []
    for ev in events:
        line = jsontext.dumps(ev)
        try:
            adapter().validate_json(line)
        except ValidationError as exc:
            found.append(f"{line}\n  {exc}")
            continue
        missing = [k for k in ALWAYS_STAMPED if k not in ev]
        if missing:
            found.append(f"{line}\n  not stamped: {missing}")
    return found
