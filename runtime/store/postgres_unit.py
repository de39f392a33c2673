"""The writes of one PostgreSQL unit of work (see base.UnitOfWork), sent in pipeline mode."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from skillc.runtime.state import Evidence, SessionState, TaskState, to_doc
from skillc.runtime.store.base import ReplyRecord, StoreConflict, StoreError
from skillc.runtime.store.rows import ENCODE, StoredHistory, reply_doc, session_doc, task_number

if TYPE_CHECKING:
    import psycopg


class PostgresUnit:
    """The writes of one unit of work on one connection in pipeline mode (see base.UnitOfWork).

    Statements are queued and sent together; a statement whose row count decides the unit (the
    lease renewal, the session's version check) is a *check*, verified as soon as its result is
    in and always before COMMIT, so a unit costs about three round trips whatever it writes."""

    def __init__(self, conn: psycopg.Connection[Any], pipe: psycopg.Pipeline, history: StoredHistory) -> None:
        self.conn = conn
        self.pipe = pipe
        self.history = history
        self.noted: list[tuple[str, int, int, int]] = []  # for `history`, once committed
        self._checks: list[tuple[psycopg.Cursor[Any], Callable[[], StoreError]]] = []

    def check(self, cur: psycopg.Cursor[Any], error: Callable[[], StoreError]) -> None:
        """Fail the unit with `error()` unless `cur` changed exactly one row."""
        self._checks.append((cur, error))

    def verify(self) -> None:
        """Raise the first failed check (sending what is queued when a result is still missing)."""
        if any(cur.rowcount < 0 for cur, _ in self._checks):
            self.pipe.sync()
        checks, self._checks = self._checks, []
        for cur, error in checks:
            if cur.rowcount != 1:
                raise error()

    def put_session(self, state: SessionState, now: float) -> None:
        """Versioned write of the session row, then the history items not stored yet."""
        doc = session_doc(state)
        conn, sid = self.conn, state.id
        if state.version == 0:
            self.check(conn.execute("INSERT INTO sessions (id, doc, updated, version) VALUES (%s, %s, %s, 1) "
                                    "ON CONFLICT (id) DO NOTHING", (sid, doc, now)),
                       lambda: StoreConflict(f"session {sid} already exists"))
        else:
            self.check(conn.execute("UPDATE sessions SET doc = %s, updated = %s, version = version + 1 "
                                    "WHERE id = %s AND version = %s", (doc, now, sid, state.version)),
                       lambda: StoreConflict(f"session {sid} was changed by another writer since it was loaded"))
        row = self.history.counts(sid, state.version)
        if row is None:
            # One flight: the lease and version checks and the history counts come back together.
            row = conn.execute("SELECT (SELECT COALESCE(MAX(seq), 0) FROM messages WHERE session = %s), "
                               "(SELECT COALESCE(MAX(seq), 0) FROM entities WHERE session = %s)", (sid, sid)).fetchone()
            self.verify()
            assert row is not None  # an aggregate always has its one row
        # else: counts this process committed at this version; the queued version check fails
        # the unit before COMMIT if another writer got there first (nothing appended is kept)
        state.version += 1
        for (table, items), stored in zip((("messages", state.user_messages), ("entities", state.entities)), row):
            if len(items) > stored:
                with conn.cursor() as cur:
                    cur.executemany(f"INSERT INTO {table} (session, seq, doc) VALUES (%s, %s, %s)",
                                    [(sid, i, ENCODE(item)) for i, item in enumerate(items[stored:], stored + 1)])
        self.noted.append((sid, state.version, len(state.user_messages), len(state.entities)))

    def put_task(self, task: TaskState) -> None:
        """Insert or replace one task document."""
        self.conn.execute(
            "INSERT INTO tasks (id, session, doc, n, state) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (session, id) "
            "DO UPDATE SET doc = EXCLUDED.doc, n = EXCLUDED.n, state = EXCLUDED.state",
            (task.id, task.session, ENCODE(to_doc(task)), task_number(task.id), task.state))

    def put_evidence(self, session: str, ev: Evidence) -> None:
        """Insert or replace one evidence document."""
        self.conn.execute(
            "INSERT INTO evidence (id, session, seq, status, doc) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (session, id) "
            "DO UPDATE SET seq = EXCLUDED.seq, status = EXCLUDED.status, doc = EXCLUDED.doc",
            (ev.id, session, ev.seq, ev.status, ENCODE(to_doc(ev))))

    def put_reply(self, reply: ReplyRecord) -> None:
        """Store a turn's reply."""
        self.conn.execute(
            "INSERT INTO replies (session, turn, delivered, doc) VALUES (%s, %s, %s, %s) ON CONFLICT (session, turn) "
            "DO UPDATE SET delivered = EXCLUDED.delivered, doc = EXCLUDED.doc",
            (reply.session, reply.turn, int(reply.delivered), reply_doc(reply)))

    def put_trace_head(self, session: str, head: str) -> None:
        """Store the session's audit chain head."""
        self.conn.execute("INSERT INTO trace_heads (session, head) VALUES (%s, %s) ON CONFLICT (session) "
                          "DO UPDATE SET head = EXCLUDED.head", (session, head))
