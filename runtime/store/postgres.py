"""The PostgreSQL store (psycopg 3 + psycopg_pool): one database shared by several runtime workers.

Same layout and rules as the SQLite store (see `sqlite.py` and `base.py`; the documents both hold
are written and read back by `rows.py`): a session row with a version, history appended per
session, one transaction per unit of work. What PostgreSQL adds:

- **Units of work** are transactions on a pooled connection. A leased unit first renews its lease
  row with `UPDATE … WHERE holder = me`; the row lock that UPDATE takes is held until COMMIT, so a
  worker taking the lease over waits for the unit to end and can never interleave with it.
- **Leases** are rows (`leases`: session, holder, expires, fence) decided under
  `SELECT … FOR UPDATE`; every grant takes the next number of the `lease_fence` sequence as its
  fencing token. Liveness is the lease's expiry alone, renewed by the holder's heartbeat
  (`renew_lease`) while its turn runs: nothing tied to a connection, so a server restart or a
  terminated backend does not make a live worker look dead. Expiry uses the caller's clock (the
  interface's `now`), so workers' clocks should agree to well within the lease's ttl (NTP does
  this). Same-host checks of `base.holder_dead` free a dead process's lease before expiry.
- **Timeouts**: every connection runs with `lock_timeout` and `statement_timeout` (connection
  options, so each unit has them without a round trip): a unit or a lease decision that would
  wait on a stuck row fails in bounded time (a lease then is not granted: the session is busy).
- **Migrations** run under a transaction-scoped advisory lock, so workers starting together
  migrate once; DDL is transactional here, so a failed migration leaves the previous version.
- **Evidence ids** come from the session row's counter, which only the lease holder advances and
  whose version check makes a stale writer fail (`StoreConflict`); (session, id) is a primary key.

Connection loss, a server restart or a full disk on the server: the unit raises
`StoreUnavailable`, the pool drops broken connections, and the next unit works once the server is
back. The URL is libpq's (`postgresql://user@host:port/db?…`); a schema can be chosen with
`?options=-csearch_path%3Dname`.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from skillc.runtime.state import SessionState
from skillc.runtime.store.base import (
    SCHEMA_VERSION,
    Lease,
    LeaseLost,
    StoreConflict,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
    holder_dead,
)
from skillc.runtime.store.rows import (
    RowReads,
    StoredHistory,
    Sweep,
    history_items,
    session_fields,
)

from skillc.runtime.store.postgres_schema import MIGRATIONS
from skillc.runtime.store.postgres_unit import PostgresUnit

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as _exc:  # pragma: no cover - the `postgres` extra is not installed
    raise StoreError("a postgresql:// store needs psycopg 3 and psycopg_pool: pip install 'skillc[postgres]'") from _exc

# Advisory lock namespace ("sklc"): the first key of every two-key advisory lock skillc takes.
_NS = 0x736B6C63
_MIGRATE_KEY = 1  # second key of the migration lock
POOL_SIZE = 10
POOL_TIMEOUT = 10.0  # seconds a unit waits for a free connection before StoreUnavailable
LOCK_TIMEOUT = 2.0  # seconds a statement waits for a row lock (a lease: then the session is busy)
STATEMENT_TIMEOUT = 15.0  # seconds any statement may run


def _options(url: str, lock_timeout: float, statement_timeout: float) -> str:
    """libpq `options` for every connection: the URL's own (a search_path) plus the timeouts."""
    from psycopg.conninfo import conninfo_to_dict

    given = str(conninfo_to_dict(url).get("options") or "")
    timeouts = f"-c lock_timeout={int(lock_timeout * 1000)} -c statement_timeout={int(statement_timeout * 1000)}"
    return f"{given} {timeouts}".strip()


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    head, at, tail = url.partition("@")
    if not at or ":" not in head.partition("://")[2]:
        return url
    scheme, _, userinfo = head.partition("://")
    return f"{scheme}://{userinfo.partition(':')[0]}:***@{tail}"


class PostgresStore(RowReads):
    """A PostgreSQL database through a connection pool; safe to share between threads."""

    PARAM = "%s"

    def __init__(self, url: str, *, pool_size: int = POOL_SIZE, pool_timeout: float = POOL_TIMEOUT,
                 connect_timeout: float = 10.0, lock_timeout: float = LOCK_TIMEOUT,
                 statement_timeout: float = STATEMENT_TIMEOUT, lease_ttl: float | None = None) -> None:
        self.url = url
        self.path = _redact(url)  # what messages name, as SQLiteStore.path does
        self.lease_ttl = lease_ttl
        self.threads = max(1, pool_size) + 2  # the runtime's store threads (offloop.py): one per connection
        self._local = threading.local()  # per thread: inside a unit (units do not nest)
        self._closed = False
        self._history = StoredHistory()
        self._nonce_sweep = Sweep()
        self._retries = max(1, pool_size) + 1  # every pooled connection may be dead at once
        kwargs: dict[str, Any] = {"autocommit": True, "connect_timeout": max(1, int(connect_timeout)),
                                  "options": _options(url, lock_timeout, statement_timeout)}
        try:
            self.pool = ConnectionPool(url, min_size=1, max_size=max(1, pool_size), timeout=pool_timeout,
                                       kwargs=kwargs, open=True, name="skillc-store")
            self._migrate()
        except (psycopg.Error, PoolTimeout) as exc:
            self._close_quietly()
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        except BaseException:
            self._close_quietly()
            raise

    def _close_quietly(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None:
            try:
                pool.close()
            except Exception:
                pass

    def _migrate(self) -> None:
        with self.pool.connection() as conn, conn.transaction():
            # Workers opening a new database together: one migrates, the others wait and find it done.
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_NS, _MIGRATE_KEY))
            conn.execute("CREATE TABLE IF NOT EXISTS skillc_schema (version INTEGER NOT NULL)")
            row = conn.execute("SELECT version FROM skillc_schema").fetchone()
            version = row[0] if row else 0
            if version > SCHEMA_VERSION:
                raise StoreError(f"store {self.path} has schema {version}, newer than this skillc ({SCHEMA_VERSION})")
            for i in range(version, SCHEMA_VERSION):
                MIGRATIONS[i](conn)
            if row is None:
                conn.execute("INSERT INTO skillc_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
            elif version != SCHEMA_VERSION:
                conn.execute("UPDATE skillc_schema SET version = %s", (SCHEMA_VERSION,))

    # ------------------------------------------------------------ units of work and leases

    @contextmanager
    def _begin(self, pipeline: bool = False) -> Iterator[tuple[psycopg.Connection[Any], psycopg.Pipeline | None]]:
        """A pooled connection inside BEGIN … COMMIT (with `pipeline`: statements queued and sent
        in flights, COMMIT in the last one). A connection found dead at BEGIN (the server
        restarted, a failover, an idle timeout) is dropped and another taken: nothing of the
        caller's ran yet, so that retry is safe; a failure after BEGIN is the caller's to see."""
        attempts = 0
        while True:
            with self.pool.connection() as conn:
                try:
                    conn.execute("BEGIN")  # its own round trip: the liveness check of the connection
                except psycopg.OperationalError:
                    attempts += 1
                    if not conn.broken or attempts > self._retries:
                        raise
                    continue  # the pool discards the broken connection as it takes it back
                try:
                    if pipeline:
                        with conn.pipeline() as pipe:
                            yield conn, pipe
                            conn.execute("COMMIT")  # sent with the last flight as the pipeline ends
                    else:
                        yield conn, None
                        conn.execute("COMMIT")
                except BaseException:
                    if not conn.closed:
                        try:
                            conn.execute("ROLLBACK")
                        except psycopg.Error:
                            pass  # a broken connection: the pool drops it, the server rolled back
                    raise
                return

    @contextmanager
    def _tx(self, what: str, pipeline: bool = False) -> Iterator[tuple[psycopg.Connection[Any], psycopg.Pipeline | None]]:
        """A transaction on a pooled connection; database failures become StoreUnavailable."""
        if self._closed:
            raise StoreUnavailable(f"store {self.path} is closed")
        try:
            with self._begin(pipeline) as pair:
                yield pair
        except (psycopg.errors.UniqueViolation, psycopg.errors.SerializationFailure) as exc:
            raise StoreConflict(f"store {self.path}: cannot {what}: {exc}") from exc
        except psycopg.DataError as exc:  # e.g. text the server cannot hold
            raise StoreError(f"store {self.path}: a value cannot be stored ({exc})") from exc
        except (psycopg.Error, PoolTimeout) as exc:
            raise StoreUnavailable(f"store {self.path}: cannot {what}: {exc}") from exc
        except UnicodeEncodeError as exc:  # a value the border should have refused: nothing is kept
            raise StoreError(f"store {self.path}: a value cannot be stored ({exc.reason})") from exc

    @contextmanager
    def unit(self, session: str | None = None, *, holder: str | None = None, expires: float | None = None,
             fence: int | None = None) -> Iterator[PostgresUnit]:
        """One transaction (see base.Store.unit)."""
        if getattr(self._local, "in_unit", False):
            raise StoreError("units of work do not nest")
        self._local.in_unit = True
        try:
            with self._tx("commit the unit of work", pipeline=True) as (conn, pipe):
                assert pipe is not None
                uow = PostgresUnit(conn, pipe, self._history)
                if holder is not None and session is not None:
                    uow.check(conn.execute("UPDATE leases SET expires = GREATEST(expires, %s) WHERE session = %s "
                                           "AND holder = %s AND (%s::bigint IS NULL OR fence = %s::bigint)",
                                           (expires or 0.0, session, holder, fence, fence)),
                              lambda: LeaseLost(f"session {session} is no longer leased to this turn"))
                yield uow
                uow.verify()
            self._history.note(uow.noted)  # committed
        finally:
            self._local.in_unit = False

    def acquire_lease(self, session: str, holder: str, now: float, ttl: float) -> Lease:
        """Take the lease when free, expired, held by a dead process of this host, or ours; each
        grant takes the next fencing token. A lease row locked beyond `lock_timeout` (a stuck
        transaction) is not granted: the session is busy, the worker is not frozen."""
        if getattr(self._local, "in_unit", False):
            raise StoreError("a lease cannot change inside a unit of work")
        try:
            with self._tx("take the lease of session " + session) as (conn, _):
                return self._acquire(conn, session, holder, now, ttl)
        except StoreUnavailable as exc:
            if isinstance(exc.__cause__, (pg_errors.LockNotAvailable, pg_errors.QueryCanceled)):
                return Lease(session, "", now, False)  # not decided in time: someone holds the row
            raise

    @staticmethod
    def _acquire(conn: psycopg.Connection[Any], session: str, holder: str, now: float, ttl: float) -> Lease:
        while True:
            # A new row, or (on conflict) the current one locked until this transaction ends.
            inserted = conn.execute("INSERT INTO leases (session, holder, expires, fence) "
                                    "VALUES (%s, %s, %s, nextval('lease_fence')) ON CONFLICT (session) DO NOTHING "
                                    "RETURNING fence", (session, holder, now + ttl)).fetchone()
            if inserted is not None:
                vrow = conn.execute("SELECT version FROM sessions WHERE id = %s", (session,)).fetchone()
                return Lease(session, holder, now + ttl, True, vrow[0] if vrow else 0, inserted[0])
            found = conn.execute("SELECT holder, expires FROM leases WHERE session = %s FOR UPDATE",
                                 (session,)).fetchone()
            if found is not None:
                break
            # released between the two statements: insert again
        current, until = found
        # The version as of this lock: a unit of the previous holder committed before it.
        vrow = conn.execute("SELECT version FROM sessions WHERE id = %s", (session,)).fetchone()
        version = vrow[0] if vrow else 0
        if current != holder and until > now and not holder_dead(current):
            return Lease(session, current, until, False, version)
        fence = conn.execute("UPDATE leases SET holder = %s, expires = %s, fence = nextval('lease_fence') "
                             "WHERE session = %s RETURNING fence", (holder, now + ttl, session)).fetchone()
        assert fence is not None  # the row is locked by this transaction
        return Lease(session, holder, now + ttl, True, version, fence[0], current != holder)

    def renew_lease(self, session: str, holder: str, fence: int, expires: float) -> bool:
        """The heartbeat (see base.Store.renew_lease)."""
        with self._tx("renew the lease of session " + session) as (conn, _):
            return conn.execute("UPDATE leases SET expires = GREATEST(expires, %s) WHERE session = %s "
                                "AND holder = %s AND fence = %s", (expires, session, holder, fence)).rowcount == 1

    def release_lease(self, session: str, holder: str, *, fence: int | None = None,
                      delivered_turn: int | None = None, trace_head: str | None = None) -> None:
        """Give the lease back, mark the reply delivered and store the chain head, together."""
        if getattr(self._local, "in_unit", False):
            raise StoreError("a lease cannot change inside a unit of work")
        with self._tx("release the lease of session " + session) as (conn, _):
            cur = conn.execute("DELETE FROM leases WHERE session = %s AND holder = %s "
                               "AND (%s::bigint IS NULL OR fence = %s::bigint)", (session, holder, fence, fence))
            if cur.rowcount == 1 and delivered_turn is not None:
                conn.execute("UPDATE replies SET delivered = 1 WHERE session = %s AND turn = %s",
                             (session, delivered_turn))
            if cur.rowcount == 1 and trace_head is not None:
                conn.execute("INSERT INTO trace_heads (session, head) VALUES (%s, %s) ON CONFLICT (session) "
                             "DO UPDATE SET head = EXCLUDED.head", (session, trace_head))

    def mark_delivered(self, session: str, turn: int) -> None:
        """The reply of `turn` reached its client."""
        with self._tx("mark a reply of session " + session + " delivered") as (conn, _):
            conn.execute("UPDATE replies SET delivered = 1 WHERE session = %s AND turn = %s", (session, turn))

    def claim_nonce(self, nonce: str, now: float, keep: float) -> bool:
        """Record `nonce`; False when any worker recorded it before (see base.Store.claim_nonce)."""
        with self._tx("record a request nonce") as (conn, _):
            if self._nonce_sweep.due(now):
                conn.execute("DELETE FROM nonces WHERE seen < %s", (now - keep,))
            return conn.execute("INSERT INTO nonces (nonce, seen) VALUES (%s, %s) ON CONFLICT (nonce) DO NOTHING",
                                (nonce, now)).rowcount == 1

    # ------------------------------------------------------------ reads

    @contextmanager
    def _snapshot(self, session: str, what: str) -> Iterator[psycopg.Connection[Any]]:
        """A read-only repeatable-read transaction: several reads see one moment of the session."""
        if self._closed:
            raise StoreUnavailable(f"store {self.path} is closed")
        try:
            with self._begin() as (conn, _):
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                yield conn
        except (pg_errors.UndefinedTable, pg_errors.UndefinedColumn) as exc:
            raise StoreCorrupt(session, what, str(exc).splitlines()[0]) from exc
        except (psycopg.Error, PoolTimeout) as exc:
            raise StoreUnavailable(f"store {self.path}: cannot read {what} of session {session}: {exc}") from exc

    def _rows(self, session: str, what: str, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """One read statement, outside any transaction (one round trip); a read is idempotent, so
        a connection found dead is replaced and the read sent again."""
        if self._closed:
            raise StoreUnavailable(f"store {self.path} is closed")
        attempts = 0
        while True:
            try:
                with self.pool.connection() as conn:
                    try:
                        return conn.execute(sql, params).fetchall()
                    except psycopg.OperationalError:
                        attempts += 1
                        if not conn.broken or attempts > self._retries:
                            raise
            except (pg_errors.UndefinedTable, pg_errors.UndefinedColumn) as exc:
                raise StoreCorrupt(session, what, str(exc).splitlines()[0]) from exc
            except (psycopg.Error, PoolTimeout) as exc:
                raise StoreUnavailable(f"store {self.path}: cannot read {what} of session {session}: {exc}") from exc

    def get_session(self, session_id: str) -> SessionState | None:
        """The session with its history, or None; `StoreCorrupt` when a row cannot be read."""
        with self._snapshot(session_id, "session") as conn:
            row = conn.execute("SELECT doc, version FROM sessions WHERE id = %s", (session_id,)).fetchone()
            if row is None:
                return None
            messages = conn.execute("SELECT doc FROM messages WHERE session = %s ORDER BY seq", (session_id,)).fetchall()
            entities = conn.execute("SELECT doc FROM entities WHERE session = %s ORDER BY seq", (session_id,)).fetchall()
            tasks = conn.execute("SELECT id FROM tasks WHERE session = %s ORDER BY n, id", (session_id,)).fetchall()
        doc = session_fields(row[0], session_id)
        history: dict[str, Any] = {"tasks": [r[0] for r in tasks]}
        for key, table, rows in (("user_messages", "messages", messages), ("entities", "entities", entities)):
            history[key] = history_items(((n, r[0]) for n, r in enumerate(rows, 1)), session_id, table)
        return SessionState(**doc, **history, version=row[1])

    def version_of(self, session_id: str) -> int:
        """The stored session's version (0 when absent): one indexed read, for a worker to tell
        whether its copy of a session is still the latest before using it."""
        rows = self._rows(session_id, "session", "SELECT version FROM sessions WHERE id = %s", (session_id,))
        return int(rows[0][0]) if rows else 0

    def sessions(self) -> list[tuple[str, float]]:
        """(id, last update) of every session, newest first."""
        return [tuple(r) for r in self._rows("*", "sessions", "SELECT id, updated FROM sessions ORDER BY updated DESC", ())]

    def raw(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """A query for tools and tests; `?` placeholders (SQLite's) are accepted as well."""
        if params and "?" in sql:
            sql = sql.replace("%", "%%").replace("?", "%s")
        with self.pool.connection() as conn:
            cur = conn.execute(sql, params or None)
            return [tuple(r) for r in cur.fetchall()] if cur.description else []

    def alive(self) -> bool:
        """False once closed (then this process's holders count as dead, see base.holder_dead)."""
        return not self._closed

    def close(self) -> None:
        """Close the pool."""
        if self._closed:
            return
        self._closed = True
        self._close_quietly()
