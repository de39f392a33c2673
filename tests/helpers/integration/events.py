"""Trace helpers shared by the integration tests: ordered expectations over docs/reference/scenarios.md events."""
from __future__ import annotations

from typing import Any

from skillc.scenario.match import matches


def expect_in_order(events: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    """Each expectation must match an event after the previous match (docs/reference/scenarios.md `expect`)."""
    i = 0
    for want in expected:
        while i < len(events) and not matches(want, events[i]):
            i += 1
        assert i < len(events), f"no event matching {want} in order; events:\n" + "\n".join(map(str, events))
        i += 1


def of_turn(events: list[dict[str, Any]], turn: int) -> list[dict[str, Any]]:
    """The events of one turn (1-based)."""
    return [e for e in events if e.get("turn") == turn]


def none_match(events: list[dict[str, Any]], pattern: dict[str, Any]) -> None:
    """No event matches `pattern` (docs/reference/scenarios.md `absent`)."""
    hits = [e for e in events if matches(pattern, e)]
    assert not hits, f"unexpected events matching {pattern}: {hits}"
