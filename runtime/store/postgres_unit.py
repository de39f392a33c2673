"""The writes of one PostgreSQL unit of work (see base.UnitOfWork), gathered and then sent as one
flight: every statement in one pipeline, one round trip, run by the server as the implicit
transaction that ends at the pipeline's Sync (see `PostgresStore._a_commit`).

A statement whose row count decides the unit (the lease renewal, the session's version check,
a new session's insert) is a *check*: its SQL fails inside the server when it did not change
exactly one row (the text of its `CHECK_*` token cast to an integer), so the transaction aborts
there, the statements queued behind it are skipped, the Sync rolls it back, and the token in the
error names what failed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skillc.runtime.seam.state import Evidence, SessionState, TaskState, to_doc
from skillc.runtime.store.base import LeaseLost, ReplyRecord, StoreConflict, StoreError
from skillc.runtime.store.rows import ENCODE, StoredHistory, carried_doc, reply_doc, session_doc, task_doc, task_number

CHECK_LEASE = "skillc:lease_lost"
CHECK_VERSION = "skillc:version_conflict"
CHECK_EXISTS = "skillc:session_exists"


def checked(sql: str, token: str) -> str:
    """`sql` (an UPDATE or INSERT … RETURNING 1) as a statement that fails unless it changed one
    row; the CASE is not a constant, so the cast runs at execution, never at planning."""
    return f"WITH u AS ({sql} RETURNING 1) SELECT (CASE WHEN count(*) = 1 THEN '1' ELSE '{token}' END)::int FROM u"


LEASE_CHECK = checked("UPDATE leases SET expires = GREATEST(expires, %s) WHERE session = %s AND holder = %s "
                      "AND (%s::bigint IS NULL OR fence = %s::bigint)", CHECK_LEASE)
SESSION_INSERT = checked("INSERT INTO sessions (id, doc, updated, version, head, task) VALUES (%s, %s, %s, 1, %s, %s) "
                         "ON CONFLICT (id) DO NOTHING", CHECK_EXISTS)
SESSION_UPDATE = checked("UPDATE sessions SET doc = %s, updated = %s, version = version + 1, "
                         "head = COALESCE(%s, head), task = %s WHERE id = %s AND version = %s", CHECK_VERSION)
# A leased unit's session row write with its lease check, in one statement (as SQLite's unit does):
# the lease renewed (holder, token) and the row updated at its version only if the lease was, each
# failure named by its own token. Sent first in the flight, so a stale holder's unit writes nothing.
LEASED_UPDATE = ("WITH l AS (UPDATE leases SET expires = GREATEST(expires, %s) WHERE session = %s AND holder = %s "
                 "AND (%s::bigint IS NULL OR fence = %s::bigint) RETURNING 1), "
                 "u AS (UPDATE sessions SET doc = %s, updated = %s, version = version + 1, head = COALESCE(%s, head), "
                 "task = %s WHERE id = %s AND version = %s AND EXISTS (SELECT 1 FROM l) RETURNING 1) "
                 f"SELECT (CASE WHEN (SELECT count(*) FROM l) <> 1 THEN '{CHECK_LEASE}' "
                 f"WHEN (SELECT count(*) FROM u) <> 1 THEN '{CHECK_VERSION}' ELSE '1' END)::int")
HISTORY_COUNTS = ("SELECT (SELECT COALESCE(MAX(seq), 0) FROM messages WHERE session = %s), "
                  "(SELECT COALESCE(MAX(seq), 0) FROM entities WHERE session = %s)")
TASK_PUT = ("INSERT INTO tasks (id, session, doc, n, state) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (session, id) "
            "DO UPDATE SET doc = EXCLUDED.doc, n = EXCLUDED.n, state = EXCLUDED.state")
EVIDENCE_PUT = ("INSERT INTO evidence (id, session, seq, status, doc) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (session, id) DO UPDATE SET seq = EXCLUDED.seq, status = EXCLUDED.status, doc = EXCLUDED.doc")
REPLY_PUT = ("INSERT INTO replies (session, turn, delivered, doc) VALUES (%s, %s, %s, %s) ON CONFLICT (session, turn) "
             "DO UPDATE SET delivered = EXCLUDED.delivered, doc = EXCLUDED.doc")
HEAD_PUT = "UPDATE sessions SET head = %s WHERE id = %s"


def check_error(message: str, session: str | None) -> StoreError | None:
    """The store's error for a failed check, from the server's message; None when it is not one."""
    if CHECK_LEASE in message:
        return LeaseLost(f"session {session} is no longer leased to this turn")
    if CHECK_VERSION in message:
        return StoreConflict(f"session {session} was changed by another writer since it was loaded")
    if CHECK_EXISTS in message:
        return StoreConflict(f"session {session} already exists")
    return None


@dataclass
class Appends:
    """A session's history lists as put, to append past what the store holds once that is known."""

    session: str
    stored: tuple[int, int] | None  # (messages, entities) stored, when this process knows it
    lists: tuple[list[Any], list[Any]]


@dataclass
class PostgresUnit:
    """The writes of one unit of work, in order, for one flight (see base.UnitOfWork)."""

    history: StoredHistory
    statements: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)
    appends: list[Appends] = field(default_factory=list)
    noted: list[tuple[str, int, int, int]] = field(default_factory=list)  # for `history`, once committed
    rows: dict[str, int] = field(default_factory=dict)  # session -> index of its row's write in `statements`
    heads: dict[str, str] = field(default_factory=dict)  # heads of sessions whose row the unit does not write

    def put_session(self, state: SessionState, now: float, task: TaskState | None = None) -> None:
        """Versioned write of the session row carrying `task`, then the history items not stored yet."""
        sid = state.id
        head, carried = self.heads.pop(sid, None), carried_doc(state, task)
        self.rows[sid] = len(self.statements)
        if state.version == 0:
            self.statements.append((SESSION_INSERT, (sid, session_doc(state), now, head, carried)))
        else:
            self.statements.append((SESSION_UPDATE, (session_doc(state), now, head, carried, sid, state.version)))
        # counts this process committed at this version, else asked in the flight; either way the
        # version check fails the unit before COMMIT if another writer got there first
        stored = self.history.counts(sid, state.version)
        state.version += 1
        self.appends.append(Appends(sid, stored, (list(state.user_messages), list(state.entities))))
        self.noted.append((sid, state.version, len(state.user_messages), len(state.entities)))

    def put_task(self, task: TaskState) -> None:
        """Insert or replace one task document."""
        self.statements.append((TASK_PUT, (task.id, task.session, task_doc(task), task_number(task.id), task.state)))

    def put_evidence(self, session: str, ev: Evidence) -> None:
        """Insert or replace one evidence document."""
        self.statements.append((EVIDENCE_PUT, (ev.id, session, ev.seq, ev.status, ENCODE(to_doc(ev)))))

    def put_reply(self, reply: ReplyRecord) -> None:
        """Store a turn's reply."""
        self.statements.append((REPLY_PUT, (reply.session, reply.turn, int(reply.delivered), reply_doc(reply))))

    def put_trace_head(self, session: str, head: str) -> None:
        """The session's audit chain head: with the session row's write when the unit has one."""
        at = self.rows.get(session)
        if at is None:
            self.heads[session] = head
            return
        sql, params = self.statements[at]
        self.statements[at] = (sql, params[:3] + (head,) + params[4:]) if sql is SESSION_INSERT else \
            (sql, params[:2] + (head,) + params[3:])

    def flight(self, lease: tuple[Any, ...] | None = None) -> list[tuple[str, tuple[Any, ...]]]:
        """The unit's statements in order, then the heads of sessions whose row it does not write;
        under a lease (LEASE_CHECK's parameters, the session's first) its check comes first, riding
        on the update of that session's row when the unit writes one."""
        out = self.statements + [(HEAD_PUT, (head, sid)) for sid, head in self.heads.items()]
        if lease is None:
            return out
        at = self.rows.get(lease[1])
        if at is None or out[at][0] is not SESSION_UPDATE:
            return [(LEASE_CHECK, lease)] + out
        return [(LEASED_UPDATE, lease + out[at][1])] + out[:at] + out[at + 1:]


def history_rows(appends: Appends, stored: tuple[int, int]) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """The INSERTs (table, rows) that append `appends`' items past `stored`."""
    out = []
    for table, items, count in zip(("messages", "entities"), appends.lists, stored):
        if len(items) > count:
            out.append((table, [(appends.session, i, ENCODE(item)) for i, item in enumerate(items[count:], count + 1)]))
    return out
