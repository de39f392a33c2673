"""How many store calls a turn makes (issue 28: each was a thread handoff, 35-40 % of a direct
turn's time on a loaded machine; on SQLite an uncontended call now runs on the loop,
tests/store/test_sqlite_without_waiting.py, and each is still a round trip on PostgreSQL). A booking
turn (the write, then finish) of a session opened by its id, counted at `store/offloop.py`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers.booking import play_bookings
from skillc.runtime.store import offloop
from test_durable_session import BYPASS, World, compiled  # noqa: F401  (a fixture)


def _hops(compiled: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:  # noqa: F811
    world = World(compiled, tmp, BYPASS)
    hops: list[str] = []
    call = offloop.call

    async def counted_call(store: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        hops.append("unit" if fn.__name__ == "apply" else fn.__name__)  # a SQLite unit is applied by one call
        return await call(store, fn, *args, **kwargs)

    monkeypatch.setattr(offloop, "call", counted_call)

    return play_bookings(world, 3, clear=hops.clear, record=lambda: list(hops), new_sessions=True)


def test_a_new_session_and_its_booking_turn_leave_the_loop_seven_times(compiled: Path, tmp_path: Path,  # noqa: F811
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Was nine: the session looked up, then stored as new (now one call, `load_or_create`), the
    lease, the trace head (now read with the lease), the four units, the lease given back."""
    for hops in _hops(compiled, tmp_path, monkeypatch):
        assert hops == ["load_or_create", "acquire_lease", "unit", "unit", "unit", "unit", "release_lease"], hops
