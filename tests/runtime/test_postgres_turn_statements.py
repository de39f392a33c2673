"""How many statements and flights (round trips) a turn sends to PostgreSQL (issue 28: one round
trip per unit of work). A booking turn (the write, then finish) of a session this process opened,
in steady state (the second and later turns of one session), counted at psycopg: every statement
a connection executes, and every flight the store sends (`PostgresStore._flight`)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers.booking import play_bookings
from test_durable_session import BYPASS, World, compiled  # noqa: F401  (a fixture)

BEFORE = 28  # statements per steady booking turn at e56cdb4 (2026-12-02, counted by this test), in 6 flights
# after: a leased unit's lease check rides on its session row's update (one statement where two were); the grant
# is two statements (the lock and the grant, then what the session is now), not six in a transaction of its own
AT_20 = 20  # at 9b202e9: each unit's flight began with BEGIN and ended with COMMIT
# now: a unit's one flight is the implicit transaction PostgreSQL runs up to the pipeline's Sync
NOW = 12
FLIGHTS = 6  # the lease taken, the four units a booking turn commits, the lease given back


def _turn_statements(compiled: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], int]]:  # noqa: F811
    import psycopg

    from skillc.runtime.store.postgres import PostgresStore

    world = World(compiled, tmp, BYPASS, backend="postgres")
    sent: list[str] = []
    flights = [0]
    execute, executemany, flight = psycopg.AsyncConnection.execute, psycopg.AsyncCursor.executemany, \
        PostgresStore._flight

    async def counted_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(str(query))
        return await execute(self, query, *args, **kwargs)

    async def counted_executemany(self: Any, query: Any, params: Any, *args: Any, **kwargs: Any) -> Any:
        params = list(params)
        sent.extend(str(query) for _ in params)  # one statement per row, in the same flight
        return await executemany(self, query, params, *args, **kwargs)

    async def counted_flight(self: Any, send: Any) -> Any:
        flights[0] += 1
        return await flight(self, send)

    monkeypatch.setattr(psycopg.AsyncConnection, "execute", counted_execute)
    monkeypatch.setattr(psycopg.AsyncCursor, "executemany", counted_executemany)
    monkeypatch.setattr(PostgresStore, "_flight", counted_flight)

    def clear() -> None:
        sent.clear()
        flights[0] = 0

    return play_bookings(world, 4, clear=clear, record=lambda: (list(sent), flights[0]))


def test_a_booking_turn_sends_fewer_statements_in_one_flight_per_unit(compiled: Path, tmp_path: Path,  # noqa: F811
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The grant (one flight of two statements), four units (one flight each: their writes, run as one implicit transaction) and the
    release (one statement); a leased unit checks its lease in the statement that writes the
    session row, so no unit sends the lease check of its own."""
    turns = _turn_statements(compiled, tmp_path, monkeypatch)
    steady = turns[1:]
    assert len({len(t) for t, _ in steady}) == 1, [len(t) for t, _ in turns]  # flat: no growth with the session
    statements, flights = steady[0]
    assert flights == FLIGHTS, (flights, statements)
    assert len(statements) <= NOW < AT_20 < BEFORE, "\n".join(statements)
    assert not [q for q in statements if q in ("BEGIN", "COMMIT")], statements  # implicit transactions
    grants = [q for q in statements if "INSERT INTO leases" in q]
    assert len(grants) == 1 and "FOR UPDATE" in grants[0], statements  # the lock and the grant, one statement
    alone = [q for q in statements if q.startswith("UPDATE leases SET expires")]
    assert not alone, alone  # the lease check rode on the session row's write
