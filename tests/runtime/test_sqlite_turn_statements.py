"""How many statements a turn sends to SQLite (issue 28: halved). A booking turn (the write, then
finish) of a session this process opened, counted at the connection (sqlite3's trace hook), in
steady state: the second and later turns of one session."""
from __future__ import annotations

from pathlib import Path

from helpers.booking import play_bookings
from test_durable_session import BYPASS, World, compiled  # noqa: F401  (a fixture)

BEFORE = 40  # statements per booking turn before issue 28 (measured on this very turn, 2026-12-02)
# after: the lease check rides on the session write; the grant is one statement returning the last reply and the
# chain head; the head and the open active task are columns of the session row; the release is two statements
NOW = 20


def _turn_statements(compiled: Path, tmp: Path) -> list[list[str]]:  # noqa: F811
    sent: list[str] = []
    return play_bookings(World(compiled, tmp, BYPASS), 4, clear=sent.clear, record=lambda: list(sent),
                         start=lambda runtime: runtime.store.db.set_trace_callback(sent.append))


def test_a_booking_turn_sends_half_the_statements_it_did(compiled: Path, tmp_path: Path) -> None:  # noqa: F811
    """Half met (issue 28: 40 -> 20): the grant (1), the four units a booking turn commits (node
    started: the row and the message; write pre-registered and settled: the evidence and the row;
    turn end: the ended task's row, the reply and the session row; each begun and committed: 17)
    and the release (2). A unit that changed only the open task writes the session row alone."""
    turns = _turn_statements(compiled, tmp_path)
    steady = turns[1:]
    assert len({len(t) for t in steady}) == 1, [len(t) for t in turns]  # flat: no growth with the session
    assert len(steady[0]) <= NOW <= BEFORE // 2, "\n".join(steady[0])
    assert not [q for q in steady[0] if q.startswith("SELECT")], steady[0]  # no read: no separate lease check
    grants = [q for q in steady[0] if q.startswith("INSERT INTO leases")]
    assert len(grants) == 1 and "RETURNING" in grants[0], steady[0]  # the grant and what it reads, one statement
    assert sum(q.startswith("UPDATE leases") for q in steady[0]) == 1, steady[0]  # the release alone
    tasks = [q for q in steady[0] if q.startswith("INSERT OR REPLACE INTO tasks")]
    assert len(tasks) == 1 and '"state":"DONE"' in tasks[0], steady[0]  # the task's own row: once, when it ended
