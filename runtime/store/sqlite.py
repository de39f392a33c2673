"""The SQLite store (stdlib): the embedded default. One file, WAL, one connection per Store.

Layout (schema 7): a session row holds the session's own fields, a version, its audit chain head,
the turn whose reply was handed over when its lease was given back, and its open active task's
document; user messages, entities, replies and evidence are rows appended per session; every
other task (one that ended, or that a later task replaced while still open) is a row of its own
(its nodes inside); `leases` holds each session's holder (empty once given back: rows are kept),
expiry, fencing token and whether the grant took it over from a holder that never gave it back.
Units of work run as `BEGIN IMMEDIATE` transactions, so a unit's lease check and its writes cannot
interleave with another process's. A leased unit's lease check is a condition of its session-row
write (one statement for both, run at the unit's end, carrying the chain head and the task); it
does not renew the lease (`units_renew` False: the turn's heartbeat does). Everything outside a
unit is one statement in its own transaction (autocommit takes the write lock for the whole
statement): a grant (`_GRANT`, which returns what the turn needs), a renewal, a release (two).
A steady booking turn sends 20 statements (tests/runtime/test_sqlite_turn_statements.py).

**Calls that cannot wait run where they are asked** (`without_waiting`, which `offloop.call` tries
first): on an uncontended connection, a statement of a WAL file with `synchronous=NORMAL` costs
CPU and a write into the page cache, never a wait, so the runtime's loop runs it itself instead
of paying two thread handoffs (about 150 µs each here, a quarter of a direct turn's cost). It
does so only when nothing could make it wait: the connection's lock free at once (another
thread's call in progress: the call goes to the store thread), SQLite's busy timeout 0 for that
call (the write lock held by another connection or process: SQLite says so at once, before
anything was done, and the call goes to the store thread, which waits as before), and no WAL
checkpoint (its fsyncs): the connection never checkpoints on commit (`wal_autocheckpoint=0`);
every `CHECKPOINT_EVERY` commits a passive checkpoint runs on a thread that may wait
(`checkpoint_due`, which offloop hands to the store thread, or inline for a caller already off
the loop). The busy timeout is switched (one PRAGMA) only when a call of the other kind comes.
"""
from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Literal, TypeVar, overload

from skillc.runtime.seam.state import Evidence, SessionState, TaskState, to_doc
from skillc.runtime.store.base import (
    SCHEMA_VERSION,
    Lease,
    LeaseLost,
    ReplyRecord,
    StoreConflict,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
    holder_dead,
)
from skillc.runtime.store.rows import (
    REPLY_DELIVERED,
    RowReads,
    DECODE,
    ENCODE,
    StoredHistory,
    Sweep,
    history_items,
    reply_doc,
    carried_doc,
    reply_from,
    session_doc,
    session_fields,
    task_doc,
    task_ids,
    task_number,
)

T = TypeVar("T")

# A lease grant, one statement: the row taken when it is free (given back: no holder), expired or
# already this holder's, with the next fencing token (one more than the largest any row holds: rows
# are never deleted, so tokens only grow); `taken` says it was taken from a holder that never gave
# it back. It returns what the turn needs before it starts, read under the same write lock.
_NEXT_FENCE = "(SELECT COALESCE(MAX(fence), 0) + 1 FROM leases)"
_GRANTED = ("fence, taken, (SELECT version FROM sessions WHERE id = :s), (SELECT head FROM sessions WHERE id = :s), "
            "(SELECT r.turn FROM replies AS r WHERE r.session = :s ORDER BY r.turn DESC LIMIT 1), "
            f"(SELECT {REPLY_DELIVERED} FROM replies AS r WHERE r.session = :s ORDER BY r.turn DESC LIMIT 1), "
            "(SELECT r.doc FROM replies AS r WHERE r.session = :s ORDER BY r.turn DESC LIMIT 1)")
_GRANT = ("INSERT INTO leases (session, holder, expires, fence) VALUES (:s, :h, :until, " + _NEXT_FENCE + ") "
          "ON CONFLICT (session) DO UPDATE SET holder = excluded.holder, expires = excluded.expires, "
          "fence = excluded.fence, taken = leases.holder NOT IN (excluded.holder, '') "
          "WHERE leases.holder IN (excluded.holder, '') OR leases.expires <= :now RETURNING " + _GRANTED)
# Not granted: who holds it; a dead process of this host's lease is then taken from that holder only.
_LEASE_NOW = "SELECT holder, expires, (SELECT version FROM sessions WHERE id = :s) FROM leases WHERE session = :s"
_TAKE = ("UPDATE leases SET holder = :h, expires = :until, fence = " + _NEXT_FENCE + ", taken = 1 "
         "WHERE session = :s AND holder = :dead RETURNING " + _GRANTED)
_HELD = "session = :s AND holder = :h AND (:f IS NULL OR fence = :f)"
_RENEW = "UPDATE leases SET expires = MAX(expires, :until) WHERE " + _HELD
# Giving a lease back: the session row's chain head and handed-over turn while the lease is still
# held, then the lease; each statement its own transaction (one that dies between them leaves a
# lease that expires, nothing else).
_RELEASE_MARKS = ("UPDATE sessions SET head = COALESCE(:head, head), delivered = MAX(delivered, COALESCE(:turn, 0)) "
                  "WHERE id = :s AND EXISTS (SELECT 1 FROM leases WHERE " + _HELD + ")")
_RELEASE = "UPDATE leases SET holder = '', expires = 0 WHERE " + _HELD
_LEASE_HELD = "SELECT 1 FROM leases WHERE session = ? AND holder = ? AND (? IS NULL OR fence = ?)"
BUSY_TIMEOUT = 30.0  # seconds a statement waits for another connection's write lock
CHECKPOINT_EVERY = 200  # commits between passive WAL checkpoints (SQLite's own default is ~1000 pages)
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class _WouldWait(Exception):
    """A call made `without_waiting` found the database locked before it did anything."""


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)  # None for the module's own errors (a closed connection)
    return isinstance(code, int) and (code & 0xFF) in _BUSY


def _script(db: sqlite3.Connection, sql: str) -> None:
    # executescript() would commit on its own; a migration must stay inside its transaction.
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


def _v1(db: sqlite3.Connection) -> None:
    _script(db, """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, doc TEXT NOT NULL, updated REAL);
        CREATE TABLE tasks (id TEXT NOT NULL, session TEXT NOT NULL, doc TEXT NOT NULL,
                            PRIMARY KEY (session, id));
        CREATE TABLE evidence (id TEXT NOT NULL, session TEXT NOT NULL, seq INTEGER NOT NULL,
                               status TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (session, id));
        CREATE INDEX evidence_status ON evidence (session, status);
    """)


def _v2(db: sqlite3.Connection) -> None:
    """Append-only history, session versions, leases and replies; v1 session documents are split."""
    _script(db, """
        ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE tasks ADD COLUMN n INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE tasks ADD COLUMN state TEXT NOT NULL DEFAULT 'RUNNING';
        CREATE TABLE messages (session TEXT NOT NULL, seq INTEGER NOT NULL, doc TEXT NOT NULL,
                               client_id TEXT, PRIMARY KEY (session, seq)) WITHOUT ROWID;
        CREATE TABLE entities (session TEXT NOT NULL, seq INTEGER NOT NULL, doc TEXT NOT NULL,
                               PRIMARY KEY (session, seq)) WITHOUT ROWID;
        CREATE TABLE replies (session TEXT NOT NULL, turn INTEGER NOT NULL, delivered INTEGER NOT NULL,
                              doc TEXT NOT NULL, PRIMARY KEY (session, turn)) WITHOUT ROWID;
        CREATE TABLE leases (session TEXT PRIMARY KEY, holder TEXT NOT NULL, expires REAL NOT NULL);
        CREATE INDEX evidence_seq ON evidence (session, seq);
        CREATE INDEX tasks_n ON tasks (session, n)
    """)
    for sid, doc in db.execute("SELECT id, doc FROM sessions").fetchall():
        try:
            data = DECODE(doc)
            messages, entities = list(data.pop("user_messages", [])), list(data.pop("entities", []))
            order = {t: i for i, t in enumerate(data.pop("tasks", []), 1)}
        except (ValueError, TypeError, AttributeError):
            continue  # left as it is: opening that session reports it corrupt
        db.execute("UPDATE sessions SET doc = ? WHERE id = ?", (ENCODE(data), sid))
        db.executemany("INSERT INTO messages (session, seq, doc) VALUES (?, ?, ?)",
                       [(sid, i, ENCODE(m)) for i, m in enumerate(messages, 1)])
        db.executemany("INSERT INTO entities (session, seq, doc) VALUES (?, ?, ?)",
                       [(sid, i, ENCODE(e)) for i, e in enumerate(entities, 1)])
        for tid, n in order.items():
            db.execute("UPDATE tasks SET n = ? WHERE session = ? AND id = ?", (n, sid, tid))
    for sid, tid, doc in db.execute("SELECT session, id, doc FROM tasks").fetchall():
        try:
            state = DECODE(doc).get("state", "RUNNING")
        except (ValueError, AttributeError):
            continue
        db.execute("UPDATE tasks SET state = ? WHERE session = ? AND id = ?", (str(state), sid, tid))


def _v3(db: sqlite3.Connection) -> None:
    """Each session's audit chain head (trace.py), so a restarted process continues the chain."""
    db.execute("CREATE TABLE trace_heads (session TEXT PRIMARY KEY, head TEXT NOT NULL)")


def _v4(db: sqlite3.Connection) -> None:
    """Signed requests' nonces (serve's replay check), kept across restarts and processes."""
    _script(db, """
        CREATE TABLE nonces (nonce TEXT PRIMARY KEY, seen REAL NOT NULL);
        CREATE INDEX nonces_seen ON nonces (seen)
    """)


def _v5(db: sqlite3.Connection) -> None:
    """Fencing tokens: each lease grant takes the next number of one store-wide counter."""
    _script(db, """
        ALTER TABLE leases ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE lease_fence (n INTEGER NOT NULL);
        INSERT INTO lease_fence (n) VALUES (0)
    """)


def _v6(db: sqlite3.Connection) -> None:
    """The audit chain head and the turn whose reply was handed over become columns of the
    session row (a unit writes the head with the row, a release both in one statement); lease
    rows stay once given back (no holder), so a grant's next token is read from them and a grant
    is one statement (the `lease_fence` counter goes)."""
    _script(db, """
        ALTER TABLE sessions ADD COLUMN head TEXT;
        ALTER TABLE sessions ADD COLUMN delivered INTEGER NOT NULL DEFAULT 0;
        UPDATE sessions SET head = (SELECT h.head FROM trace_heads AS h WHERE h.session = sessions.id);
        DROP TABLE trace_heads;
        ALTER TABLE leases ADD COLUMN taken INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX leases_fence ON leases (fence);
        DROP TABLE lease_fence
    """)


def _v7(db: sqlite3.Connection) -> None:
    """The session row carries its open active task's document: a unit that changed only that
    task writes one row, not two. Until a session's next unit its task row holds it, as before."""
    db.execute("ALTER TABLE sessions ADD COLUMN task TEXT")


# Migrations from day one: index i migrates user_version i -> i+1.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1, _v2, _v3, _v4, _v5, _v6, _v7)
assert len(MIGRATIONS) == SCHEMA_VERSION


@dataclass
class _RowWrite:
    """A session row's write, as `put_session` was given it; run when the unit ends, so the chain
    head (and the active task) put after it ride on the same statement."""

    sid: str
    version: int  # the version the row must have (0: a new row)
    doc: str
    now: float
    lists: tuple[list[Any], list[Any]]  # user messages, entities
    known: tuple[int, int] | None  # how many of each are stored, when this process knows it
    task: str | None  # the open active task's document the row carries (None: none)
    head: str | None = None


class _Unit:
    """The writes of one unit of work on one connection (see base.UnitOfWork)."""

    def __init__(self, db: sqlite3.Connection, history: StoredHistory,
                 lease: tuple[str, str, int | None] | None = None) -> None:
        self.db = db
        self.history = history
        self.noted: list[tuple[str, int, int, int]] = []  # for `history`, once committed
        self.lease = lease  # (session, holder, fence) this unit must hold, until a write checked it
        self.rows: dict[str, _RowWrite] = {}
        self.heads: dict[str, str] = {}  # heads of sessions whose row this unit does not write

    def check_lease(self) -> None:
        """`LeaseLost` unless the unit's lease is held (when no session write checked it yet)."""
        if self.lease is not None:
            session, holder, fence = self.lease
            if self.db.execute(_LEASE_HELD, (session, holder, fence, fence)).fetchone() is None:
                raise LeaseLost(f"session {session} is no longer leased to this turn")
            self.lease = None

    def _guard(self, sid: str) -> tuple[str, tuple[Any, ...]]:
        """The lease condition a write of session `sid`'s row carries (none when not leased)."""
        if self.lease is None or self.lease[0] != sid:
            return "", ()
        _, holder, fence = self.lease
        return (" AND EXISTS (SELECT 1 FROM leases WHERE session = ? AND holder = ? AND (? IS NULL OR fence = ?))",
                (sid, holder, fence, fence))

    def put_session(self, state: SessionState, now: float, task: TaskState | None = None) -> None:
        """The session row's versioned write (run at the unit's end) carrying `task`, then the
        history items not stored yet. `state.version` is advanced now."""
        self.rows[state.id] = _RowWrite(state.id, state.version, session_doc(state), now,
                                        (list(state.user_messages), list(state.entities)),
                                        self.history.counts(state.id, state.version), carried_doc(state, task),
                                        self.heads.pop(state.id, None))
        state.version += 1
        self.noted.append((state.id, state.version, len(state.user_messages), len(state.entities)))

    def finish(self) -> None:
        """The unit's last statements, before COMMIT: each session row (its lease check riding on
        it), its history appends, the heads of rows not written, the lease check if none was."""
        for row in self.rows.values():
            self._write_row(row)
        for sid, head in self.heads.items():
            self.db.execute("UPDATE sessions SET head = ? WHERE id = ?", (head, sid))
        self.check_lease()  # a unit that wrote no row of its leased session checks its lease here

    def _write_row(self, row: _RowWrite) -> None:
        db, sid = self.db, row.sid
        guard, held = self._guard(sid)  # the lease check rides on the row's write: one statement
        if row.version == 0:
            try:
                cur = db.execute("INSERT INTO sessions (id, doc, updated, version, head, task) SELECT ?, ?, ?, 1, ?, ? "
                                 "WHERE 1" + guard, (sid, row.doc, row.now, row.head, row.task, *held))
            except sqlite3.IntegrityError as exc:
                raise StoreConflict(f"session {sid} already exists") from exc
            if cur.rowcount != 1:
                self.check_lease()
        else:
            cur = db.execute("UPDATE sessions SET doc = ?, updated = ?, version = version + 1, head = COALESCE(?, head), "
                             "task = ? WHERE id = ? AND version = ?" + guard,
                             (row.doc, row.now, row.head, row.task, sid, row.version, *held))
            if cur.rowcount != 1:
                self.check_lease()  # LeaseLost when that is why; else the version moved
                raise StoreConflict(f"session {sid} was changed by another writer since it was loaded")
        if guard:
            self.lease = None  # checked
        for n, (table, items) in enumerate(zip(("messages", "entities"), row.lists)):
            stored = row.known[n] if row.known is not None else \
                db.execute(f"SELECT COALESCE(MAX(seq), 0) FROM {table} WHERE session = ?", (sid,)).fetchone()[0]
            if len(items) > stored:
                db.executemany(f"INSERT INTO {table} (session, seq, doc) VALUES (?, ?, ?)",
                               [(sid, i, ENCODE(item)) for i, item in enumerate(items[stored:], stored + 1)])

    def put_task(self, task: TaskState) -> None:
        """Insert or replace one task's row (its document: rows.task_doc)."""
        self.db.execute("INSERT OR REPLACE INTO tasks (id, session, doc, n, state) VALUES (?, ?, ?, ?, ?)",
                        (task.id, task.session, task_doc(task), task_number(task.id), task.state))

    def put_evidence(self, session: str, ev: Evidence) -> None:
        """Insert or replace one evidence document."""
        self.db.execute("INSERT OR REPLACE INTO evidence (id, session, seq, status, doc) VALUES (?, ?, ?, ?, ?)",
                        (ev.id, session, ev.seq, ev.status, ENCODE(to_doc(ev))))

    def put_reply(self, reply: ReplyRecord) -> None:
        """Store a turn's reply."""
        self.db.execute("INSERT OR REPLACE INTO replies (session, turn, delivered, doc) VALUES (?, ?, ?, ?)",
                        (reply.session, reply.turn, int(reply.delivered), reply_doc(reply)))

    def put_trace_head(self, session: str, head: str) -> None:
        """The session's audit chain head: with the session row's write when the unit has one."""
        row = self.rows.get(session)
        if row is not None:
            row.head = head
        else:
            self.heads[session] = head


def _is_corruption(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and any(
        s in text for s in ("no such table", "no such column", "malformed", "not a database", "corrupt"))


class _Held:
    """`with store._hold:` the store's lock, and the connection's busy timeout set for the
    holder's kind of call (a class, not a generator: a turn takes it some forty times)."""

    __slots__ = ("store", "lock")

    def __init__(self, store: SQLiteStore) -> None:
        self.store = weakref.ref(store)  # no cycle: a dropped store is freed at once (offloop's threads go with it)
        self.lock = store._lock

    def __enter__(self) -> None:
        store = self.store()
        assert store is not None  # the store is the caller
        self.lock.acquire()
        if store._waits == store._now:  # a call of the other kind used the connection last
            try:
                store.db.execute(f"PRAGMA busy_timeout = {0 if store._now else store._busy_ms}")
            except BaseException:
                self.lock.release()
                raise
            store._waits = not store._now

    def __exit__(self, *exc: Any) -> None:
        self.lock.release()


class SQLiteStore(RowReads):
    """One SQLite file (or ":memory:"); one connection, used by one thread at a time (a lock): the
    runtime calls it from one dedicated thread (`offloop.py`), tools and tests from theirs."""

    threads = 1  # one connection: more threads would only queue on its lock

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = BUSY_TIMEOUT,
                 lease_ttl: float | None = None) -> None:
        path = str(path)
        if path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.path = path
        self.lease_ttl = lease_ttl
        self.units_renew = False  # a leased unit checks its lease in its session write; the heartbeat renews
        self._in_unit = False
        self._lock = threading.RLock()  # one statement sequence at a time on the one connection
        self._hold = _Held(self)
        self._history = StoredHistory()
        self._nonce_sweep = Sweep()
        self._busy_ms = int(busy_timeout * 1000)
        self._waits = True  # the connection's busy timeout is `busy_timeout` (False: 0)
        self._now = False  # a call `without_waiting` holds the lock
        self._commits = 0  # since the last checkpoint
        self._asked = False  # a checkpoint was asked for and has not run yet
        self.wal = False
        try:
            self.db = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout, check_same_thread=False)
            self._retry_locked(lambda: self.db.execute("PRAGMA journal_mode=WAL"), busy_timeout)
            self.wal = str(self.db.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal"
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints: `checkpoint`, never on a commit
            self._retry_locked(self._migrate, busy_timeout)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {path}: {exc}") from exc

    @staticmethod
    def _retry_locked(action: Callable[[], Any], budget: float) -> None:
        # Several processes opening a new file at once: switching to WAL and the first schema
        # take locks the busy handler does not always wait for; retry within the budget.
        end = time.monotonic() + budget
        while True:
            try:
                action()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > end:
                    raise
                time.sleep(0.01)

    def _migrate(self) -> None:
        db = self.db
        if db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return
        db.execute("BEGIN IMMEDIATE")  # the version is read again under the write lock
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(f"store {self.path} has schema {version}, newer than this skillc ({SCHEMA_VERSION})")
            for i in range(version, SCHEMA_VERSION):
                MIGRATIONS[i](db)
                db.execute(f"PRAGMA user_version={i + 1}")
            db.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

    def _rollback(self) -> None:
        # A failed COMMIT (disk full) may or may not have ended the transaction: ask SQLite.
        if self.db.in_transaction:
            try:
                self.db.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    # ------------------------------------------------------------ units of work and leases

    @contextmanager
    def unit(self, session: str | None = None, *, holder: str | None = None, expires: float | None = None,
             fence: int | None = None) -> Iterator[_Unit]:
        """One transaction (see base.Store.unit)."""
        with self._hold:
            with self._unit(session, holder, expires, fence) as uow:
                yield uow

    @contextmanager
    def _unit(self, session: str | None, holder: str | None, expires: float | None,
              fence: int | None) -> Iterator[_Unit]:
        if self._in_unit:
            raise StoreError("units of work do not nest")
        self._in_unit = True
        try:
            try:
                self.db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                if self._now and _is_busy(exc):
                    raise _WouldWait() from exc
                raise StoreUnavailable(f"store {self.path}: cannot begin a transaction: {exc}") from exc
            try:
                uow = _Unit(self.db, self._history,
                            (session, holder, fence) if holder is not None and session is not None else None)
                yield uow
                uow.finish()
                self.db.execute("COMMIT")
                self._history.note(uow.noted)
                self._committed()
            except sqlite3.Error as exc:
                self._rollback()
                raise StoreUnavailable(f"store {self.path}: the unit of work was not committed: {exc}") from exc
            except UnicodeEncodeError as exc:  # a value the border should have refused: keep the store clean
                self._rollback()
                raise StoreError(f"store {self.path}: a value cannot be stored ({exc.reason})") from exc
            except BaseException:
                self._rollback()
                raise
        finally:
            self._in_unit = False

    def acquire_lease(self, session: str, holder: str, now: float, ttl: float) -> Lease:
        """Take the lease when free, expired, held by a dead process of this host, or ours; each
        grant takes the next fencing token. One statement when granted (see `_GRANT`)."""
        what = "take the lease of session " + session
        args = {"s": session, "h": holder, "until": now + ttl, "now": now}
        rows = self._lone(what, _GRANT, args, reads=session)
        if not rows:
            found = self._lone(what, _LEASE_NOW, args, reads=session)
            current, until, version = found[0] if found else ("", now, 0)
            if not current or not holder_dead(current):
                return Lease(session, current, until, False, version or 0)
            rows = self._lone(what, _TAKE, dict(args, dead=current), reads=session)  # from that holder only
            if not rows:  # someone else got there first
                return Lease(session, "", now, False, version or 0)
        fence, taken, version, head, turn, delivered, doc = rows[0]
        last = reply_from(session, turn, delivered, doc) if turn is not None else None
        return Lease(session, holder, now + ttl, True, version or 0, fence, bool(taken), last=last, head=head)

    def renew_lease(self, session: str, holder: str, fence: int, expires: float) -> bool:
        """The heartbeat (see base.Store.renew_lease): one statement."""
        return self._lone("renew the lease of session " + session, _RENEW,
                          {"s": session, "h": holder, "f": fence, "until": expires}, count=True) == 1

    def release_lease(self, session: str, holder: str, *, fence: int | None = None,
                      delivered_turn: int | None = None, trace_head: str | None = None) -> None:
        """Give the lease back: the chain head and the reply handed over first (one statement,
        when there is either), then the lease (one statement)."""
        what = "release the lease of session " + session
        args = {"s": session, "h": holder, "f": fence, "head": trace_head, "turn": delivered_turn}
        if trace_head is not None or delivered_turn is not None:
            self._lone(what, _RELEASE_MARKS, args, count=True)
        self._lone(what, _RELEASE, args, count=True)

    def mark_delivered(self, session: str, turn: int) -> None:
        """The reply of `turn` reached its client."""
        self._lone("mark a reply of session " + session + " delivered",
                   "UPDATE replies SET delivered = 1 WHERE session = ? AND turn = ?", (session, turn), count=True)

    def claim_nonce(self, nonce: str, now: float, keep: float) -> bool:
        """Record `nonce`; False when it was recorded before (see base.Store.claim_nonce)."""
        if self._nonce_sweep.due(now):
            self._lone("forget old request nonces", "DELETE FROM nonces WHERE seen < ?", (now - keep,), count=True)
        return self._lone("record a request nonce", "INSERT OR IGNORE INTO nonces (nonce, seen) VALUES (?, ?)",
                          (nonce, now), count=True) == 1

    @overload
    def _lone(self, what: str, sql: str, params: Any, *, reads: str | None = None) -> list[tuple[Any, ...]]: ...

    @overload
    def _lone(self, what: str, sql: str, params: Any, *, count: Literal[True]) -> int: ...

    def _lone(self, what: str, sql: str, params: Any, *, count: bool = False,
              reads: str | None = None) -> list[tuple[Any, ...]] | int:
        """One statement outside any unit, its own transaction (SQLite's autocommit takes the
        write lock for the whole statement): its rows, or with `count` the rows it changed.
        `reads`: the session whose rows it reads, whose damage is `StoreCorrupt` as in `_rows`."""
        with self._hold:
            if self._in_unit:
                raise StoreError("a lease cannot change inside a unit of work")
            try:
                cur = self.db.execute(sql, params)
                out = cur.rowcount if count else cur.fetchall()  # fetched: the statement ends, and commits
            except sqlite3.Error as exc:
                self._rollback()
                if self._now and _is_busy(exc):  # an autocommit statement that found the lock taken did nothing
                    raise _WouldWait() from exc
                if reads is not None and _is_corruption(exc):
                    raise StoreCorrupt(reads, "lease and latest reply", str(exc)) from exc
                raise StoreUnavailable(f"store {self.path}: cannot {what}: {exc}") from exc
            self._committed()
            return out

    # ------------------------------------------------------------ calls that cannot wait

    def without_waiting(self, fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[bool, T | None]:
        """`(True, fn(*args, **kwargs))` when it ran without waiting for anything (the module's
        docstring says when), `(False, None)` when it did nothing because it would have waited:
        the caller then runs it where waiting is allowed. Errors are the call's own."""
        if not self._lock.acquire(blocking=False):
            return False, None
        try:
            self._now = True
            try:
                return True, fn(*args, **kwargs)
            except _WouldWait:
                return False, None
            finally:
                self._now = False
        finally:
            self._lock.release()

    def checkpoint_due(self) -> bool:
        """True, once, when enough commits went into the WAL since its last checkpoint: the
        caller then runs `checkpoint` where it may wait."""
        if self.wal and self._commits >= CHECKPOINT_EVERY and not self._asked:
            self._asked = True
            return True
        return False

    def _committed(self) -> None:
        self._commits += 1
        if not self._now and self.checkpoint_due():  # a caller that may wait: now
            self.checkpoint()

    def checkpoint(self) -> None:
        """A passive WAL checkpoint (copies what no reader needs into the file, waits for no
        one; its fsyncs are why it never runs `without_waiting`). Errors are left for the next."""
        try:
            with self._hold:
                if self._now or self._in_unit:
                    return
                self._commits, self._asked = 0, False
                self.db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error:  # closed, or the disk: the next checkpoint tries again
            pass

    # ------------------------------------------------------------ reads

    def _rows(self, session: str, what: str, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            with self._hold:
                return self.db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            if self._now and _is_busy(exc):
                raise _WouldWait() from exc
            if _is_corruption(exc):
                raise StoreCorrupt(session, what, str(exc)) from exc
            raise StoreUnavailable(f"store {self.path}: cannot read {what} of session {session}: {exc}") from exc

    def get_session(self, session_id: str) -> SessionState | None:
        """The session with its history, or None; `StoreCorrupt` when a row cannot be read."""
        with self._hold:  # one moment of the session: no unit of another thread in between
            return self._session(session_id)

    def _session(self, session_id: str) -> SessionState | None:
        rows = self._rows(session_id, "session", "SELECT doc, version, task IS NOT NULL FROM sessions WHERE id = ?",
                          (session_id,))
        if not rows:
            return None
        doc = session_fields(rows[0][0], session_id)
        history: dict[str, Any] = {}
        for key, table in (("user_messages", "messages"), ("entities", "entities")):
            history[key] = history_items(self._rows(
                session_id, table, f"SELECT seq, doc FROM {table} WHERE session = ? ORDER BY seq", (session_id,)),
                session_id, table)
        history["tasks"] = task_ids(self._rows(session_id, "tasks", "SELECT id FROM tasks WHERE session = ? ORDER BY n, id",
                                               (session_id,)), doc.get("active_task") if rows[0][2] else None)
        version = rows[0][1]
        if not isinstance(version, int):
            raise StoreCorrupt(session_id, "session", "version is not an integer")
        return SessionState(**doc, **history, version=version)

    def load_or_create(self, state: SessionState, now: float) -> SessionState | None:
        """The stored session, or None once `state` was stored as new (see base.Store.load_or_create)."""
        with self._hold:  # no unit of another thread in between
            found = self._session(state.id)
            if found is not None:
                return found
            try:
                with self.unit(state.id) as uow:  # the lock is re-entrant
                    uow.put_session(state, now)
                return None
            except StoreConflict:  # created at this moment by another process: read theirs
                state.version = 0
                found = self._session(state.id)
                if found is None:
                    raise
                return found

    def version_of(self, session_id: str) -> int:
        """The stored session's version (0 when absent), for a process sharing the file to tell
        whether its copy of a session is stale; `StoreCorrupt` when the row's version is not an
        integer."""
        rows = self._rows(session_id, "session", "SELECT version FROM sessions WHERE id = ?", (session_id,))
        if not rows:
            return 0
        version = rows[0][0]
        if not isinstance(version, int) or isinstance(version, bool):
            raise StoreCorrupt(session_id, "session", "version is not an integer")
        return version

    def sessions(self) -> list[tuple[str, float]]:
        """(id, last update) of every session, newest first."""
        with self._hold:
            return [tuple(r) for r in self.db.execute("SELECT id, updated FROM sessions ORDER BY updated DESC")]

    def raw(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Read-only query for tools and tests."""
        with self._hold:
            return self.db.execute(sql, params).fetchall()

    def alive(self) -> bool:
        """False once the connection is closed (by `close()` or by a test killing it)."""
        try:
            self.db.total_changes
        except sqlite3.ProgrammingError:
            return False
        return True

    def close(self) -> None:
        """Close the connection."""
        self.db.close()
