"""The trace's consumers dispatch on typed events: each handler table is keyed by `EventName` (a
string key would be an event type spelled outside words/events.py), and the span builder and the
AG-UI mapping account for every type, as the renderer does (tests/cli/test_render_handlers.py): a
new event type gets a handler or a reason it has none."""
from __future__ import annotations

import pytest

from skillc.runtime.replay.trace_format import TAKEN
from skillc.runtime.telemetry.core import TIMED
from skillc.runtime.telemetry.metrics import COUNTED
from skillc.runtime.words.events import EventName


@pytest.mark.parametrize("table", [COUNTED, TIMED, TAKEN], ids=["metrics.COUNTED", "core.TIMED", "trace_format.TAKEN"])
def test_each_table_is_keyed_by_event_name(table: dict[str, object]) -> None:
    assert table and all(isinstance(name, EventName) for name in table)


def test_every_event_type_shapes_the_spans_or_is_listed_as_not_spanned() -> None:
    otel = pytest.importorskip("skillc.runtime.telemetry.otel")
    assert all(isinstance(name, EventName) for name in otel.HANDLERS)
    assert not set(otel.HANDLERS) & otel.NOT_SPANNED
    assert set(otel.HANDLERS) | otel.NOT_SPANNED == set(EventName)
    assert otel.KEEP_TOOL_OPEN <= set(EventName)


def test_a_plain_string_type_finds_its_handler() -> None:
    # a trace read back from a file holds plain strings: a StrEnum key is found by its string
    assert TAKEN.get("tool.call") is TAKEN[EventName.TOOL_CALL]


def test_every_event_type_is_mapped_to_ag_ui_or_listed_as_not_shown() -> None:
    mapping = pytest.importorskip("skillc.runtime.server.mapping")
    assert all(isinstance(name, EventName) for name in mapping._HANDLERS)
    assert not set(mapping._HANDLERS) & mapping.NOT_SHOWN
    assert set(mapping._HANDLERS) | mapping.NOT_SHOWN == set(EventName)
