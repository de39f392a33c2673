"""The PostgreSQL store (psycopg 3's `AsyncConnectionPool`): one database shared by several runtime
workers.

Same layout and rules as the SQLite store (see `sqlite.py` and `base.py`; the documents both hold
are written and read back by `rows.py`): a session row with a version, history appended per
session, one transaction per unit of work. What PostgreSQL adds:

- **Async, on the runtime's loop or the store's own** (`postgres_home.py`, `storeloop.py`): the
  connections are psycopg `AsyncConnection`s. The runtime awaits each call (`offloop.call` /
  `offloop.unit` find the coroutine through `coroutine`), on connections of its own loop (the
  home: no thread handoff) while one is free, else on the pool living on one event loop thread
  of the store. Either way no store call blocks the runtime's loop, and a session waiting on a
  row lock is a suspended coroutine, not a thread; synchronous tools and tests call the same
  store synchronously (they wait for the coroutine on the store's loop).
- **One round trip per unit of work**: a unit's writes are gathered (`postgres_unit.py`) and sent
  as one pipeline flight, each statement prepared on its connection; with no Sync before the
  flight's end, PostgreSQL runs them as one implicit transaction (a failing statement skips the
  rest, and the Sync rolls the transaction back; else it commits), so no `BEGIN` or `COMMIT` is
  sent. Row-count checks fail inside the server (the lease held, the
  version unchanged), aborting the transaction before it commits. The history counts a unit
  needs are known from this process's last commit or read of the session; else they are asked in
  the same transaction (a second flight: then the unit is wrapped in `BEGIN` and `COMMIT`). A leased unit's lease check rides on the statement
  that writes its session row. Taking a lease is one flight too, of two statements (a second
  flight only to take over from a dead holder of this host); renewing or releasing one, marking a reply
  delivered, claiming a nonce and every read are one statement each; reading a whole session is
  one flight in one repeatable-read snapshot.
- **Leases** are rows (`leases`: session, holder, expires, fence) decided under the row's lock;
  every grant takes the next number of the `lease_fence` sequence as its fencing token (so a
  lease given back is deleted, where SQLite keeps the row to read its next token from); the
  release writes the session row's chain head and handed-over turn in the same statement. Liveness
  is the lease's expiry alone, renewed by the holder's heartbeat (`renew_lease`) while its turn
  runs: nothing tied to a connection, so a server restart or a terminated backend does not make a
  live worker look dead. Expiry uses the caller's clock (the interface's `now`), so workers'
  clocks should agree to well within the lease's ttl (NTP does this). Same-host checks of
  `base.holder_dead` free a dead process's lease before expiry.
- **Timeouts**: every connection runs with `lock_timeout` and `statement_timeout` (connection
  options, so each unit has them without a round trip): a unit or a lease decision that would
  wait on a stuck row fails in bounded time (a lease then is not granted: the session is busy).
- **Migrations** run at open on a connection of their own, under a transaction-scoped advisory
  lock, so workers starting together migrate once; DDL is transactional here, so a failed
  migration leaves the previous version.
- **Evidence ids** come from the session row's counter, which only the lease holder advances and
  whose version check makes a stale writer fail (`StoreConflict`); (session, id) is a primary key.

Connection loss, a server restart or a full disk on the server: the unit raises
`StoreUnavailable`, the pool drops broken connections, and the next unit works once the server is
back. A pooled connection the server has already ended (it sent its goodbye, or closed the
socket: a restart, a terminated backend) is seen before anything is sent on it, dropped and
another taken; a failure after the flight was sent is the caller's to see (a read is sent
again). The URL is libpq's (`postgresql://user@host:port/db?…`); a schema can be chosen with
`?options=-csearch_path%3Dname`.
"""
from __future__ import annotations

import asyncio
import select
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

from skillc.runtime.seam.state import SessionState
from skillc.runtime.store.base import (
    SCHEMA_VERSION,
    Lease,
    StoreConflict,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
    holder_dead,
)
from skillc.runtime.store.postgres_home import CURRENT, HomeConnections, Slot
from skillc.runtime.store.postgres_schema import MIGRATIONS
from skillc.runtime.store.postgres_unit import (
    HISTORY_COUNTS,
    PostgresUnit,
    check_error,
    history_rows,
)
from skillc.runtime.store.rows import (
    REPLY_DELIVERED,
    RowReads,
    StoredHistory,
    Sweep,
    history_items,
    reply_from,
    session_fields,
    task_ids,
)
from skillc.runtime.store.storeloop import StoreLoop

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg_pool import AsyncConnectionPool, PoolTimeout
except ImportError as _exc:  # pragma: no cover - the `postgres` extra is not installed
    raise StoreError("a postgresql:// store needs psycopg 3 and psycopg_pool: pip install 'skillc[postgres]'") from _exc

T = TypeVar("T")

# Advisory lock namespace ("sklc"): the first key of every two-key advisory lock skillc takes.
_NS = 0x736B6C63
_MIGRATE_KEY = 1  # second key of the migration lock
POOL_SIZE = 10
POOL_TIMEOUT = 10.0  # seconds a unit waits for a free connection before StoreUnavailable
LOCK_TIMEOUT = 2.0  # seconds a statement waits for a row lock (a lease: then the session is busy)
STATEMENT_TIMEOUT = 15.0  # seconds any statement may run

# Taking a lease, one flight of two statements and no BEGIN: in a pipeline with no Sync between them
# they run as one implicit transaction, so the row lock is held until both ran. The grant: the
# lease row locked first (the insert's row is read from the lock's, so the lock runs before it),
# which gives the holder it had (for `taken_over`); then the grant when the lease is free, expired
# or ours. Then, in a snapshot of its own taken after the lock (read committed: a unit of the
# previous holder committed before it is seen), what the lease is now, the session's version, its
# chain head and its latest reply.
_LEASE_GRANT = ("WITH prev AS (SELECT holder FROM leases WHERE session = %s FOR UPDATE), "
                "g AS (INSERT INTO leases (session, holder, expires, fence) "
                "SELECT %s, %s, %s, nextval('lease_fence') FROM (SELECT count(*) FROM prev) AS locked "
                "ON CONFLICT (session) DO UPDATE SET holder = EXCLUDED.holder, expires = EXCLUDED.expires, "
                "fence = EXCLUDED.fence WHERE leases.holder = EXCLUDED.holder OR leases.expires <= %s RETURNING fence) "
                "SELECT (SELECT holder FROM prev), (SELECT fence FROM g)")
_LAST_REPLY = (f"SELECT r.turn, {REPLY_DELIVERED}, r.doc FROM replies AS r WHERE r.session = %s "
               "ORDER BY r.turn DESC LIMIT 1")
_LEASE_NOW = ("SELECT l.holder, l.expires, s.version, s.head, r.turn, r.delivered, r.doc "
              "FROM (SELECT 1) AS one LEFT JOIN leases AS l ON l.session = %s LEFT JOIN sessions AS s ON s.id = %s "
              f"LEFT JOIN LATERAL ({_LAST_REPLY}) AS r (turn, delivered, doc) ON true")
_LEASE_TAKE = ("WITH u AS (UPDATE leases SET holder = %s, expires = %s, fence = nextval('lease_fence') "
               "WHERE session = %s AND holder = %s RETURNING fence) "
               "SELECT (SELECT fence FROM u), s.version, s.head FROM (SELECT 1) AS one "
               "LEFT JOIN sessions AS s ON s.id = %s")
_RENEW = ("UPDATE leases SET expires = GREATEST(expires, %s) WHERE session = %s AND holder = %s AND fence = %s")
# Giving a lease back, one statement: the lease, and with it the session row's chain head and the
# turn whose reply was handed over.
_RELEASE = ("WITH d AS (DELETE FROM leases WHERE session = %s AND holder = %s "
            "AND (%s::bigint IS NULL OR fence = %s::bigint) RETURNING 1), "
            "m AS (UPDATE sessions SET head = COALESCE(%s::text, head), "
            "delivered = GREATEST(delivered, COALESCE(%s::int, 0)) WHERE id = %s AND EXISTS (SELECT 1 FROM d) "
            "AND (%s::text IS NOT NULL OR %s::int IS NOT NULL)) "
            "SELECT count(*) FROM d")
_DELIVERED = "UPDATE replies SET delivered = 1 WHERE session = %s AND turn = %s"
_NONCE = "INSERT INTO nonces (nonce, seen) VALUES (%s, %s) ON CONFLICT (nonce) DO NOTHING"
_NONCE_SWEEP = "DELETE FROM nonces WHERE seen < %s"
_SESSION_READS = ("SELECT doc, version, task IS NOT NULL FROM sessions WHERE id = %s",
                  "SELECT doc FROM messages WHERE session = %s ORDER BY seq",
                  "SELECT doc FROM entities WHERE session = %s ORDER BY seq",
                  "SELECT id FROM tasks WHERE session = %s ORDER BY n, id")
# Calls the runtime awaits natively (offloop.call): everything else of the interface is a read
# of RowReads (run as a coroutine through its plan) or synchronous only (close).
_NATIVE = ("acquire_lease", "renew_lease", "release_lease", "mark_delivered", "claim_nonce", "get_session",
           "load_or_create", "version_of", "sessions", "raw")


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


def _ended(conn: psycopg.AsyncConnection[Any]) -> bool:
    """An idle pooled connection the server already ended: it has something to read (the
    server's goodbye, or end of file) although nothing was asked. One poll, no round trip."""
    if conn.closed or conn.broken:
        return True
    try:
        readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return True
    return bool(readable)


def _retrieved(task: asyncio.Task[Any]) -> None:
    """A call whose awaiting task was cancelled fails unseen: its error is taken here, so asyncio
    does not log it as never retrieved (the call's own caller saw the cancellation)."""
    if not task.cancelled():
        task.exception()


class PostgresStore(RowReads):
    """A PostgreSQL database through async connections on the runtime's loop and a pool on the
    store's own loop; safe to use from any thread and any event loop."""

    PARAM = "%s"

    def __init__(self, url: str, *, pool_size: int = POOL_SIZE, pool_timeout: float = POOL_TIMEOUT,
                 connect_timeout: float = 10.0, lock_timeout: float = LOCK_TIMEOUT,
                 statement_timeout: float = STATEMENT_TIMEOUT, lease_ttl: float | None = None) -> None:
        self.url = url
        self.path = _redact(url)  # what messages name, as SQLiteStore.path does
        self.lease_ttl = lease_ttl
        self.units_renew = True  # a leased unit renews its lease in the same flight
        self.threads = 4  # offloop's threads, for composite calls that are not one store method
        self._closed = False
        self._history = StoredHistory()
        self._nonce_sweep = Sweep()
        self._retries = max(1, pool_size) + 1  # every pooled connection may be dead at once
        self._kwargs: dict[str, Any] = {"autocommit": True, "connect_timeout": max(1, int(connect_timeout)),
                                        "options": _options(url, lock_timeout, statement_timeout)}
        self._loop = StoreLoop("skillc-store-pg")
        self.pool: AsyncConnectionPool[Any] | None = None
        self._home = HomeConnections(url, self._kwargs, max(1, pool_size))
        try:
            self._migrate()
            self._loop.run(self._open_pool(max(1, pool_size), pool_timeout))
        except (psycopg.Error, PoolTimeout) as exc:
            self._close_quietly()
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        except BaseException:
            self._close_quietly()
            raise

    async def _open_pool(self, size: int, timeout: float) -> None:
        self.pool = AsyncConnectionPool(self.url, min_size=1, max_size=size, timeout=timeout, kwargs=self._kwargs,
                                        open=False, name="skillc-store")
        await self.pool.open()

    def _close_quietly(self) -> None:
        self._home.close()
        pool = self.pool
        if pool is not None:
            try:
                self._loop.run(pool.close())
            except Exception:
                pass
        self._loop.close()

    def _migrate(self) -> None:
        with psycopg.connect(self.url, **self._kwargs) as conn, conn.transaction():
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

    # ------------------------------------------------------------ the async face

    def coroutine(self, name: str, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any] | None:
        """The coroutine of interface method `name` with these arguments, for `offloop.call` to
        await (`_awaited`); None when `name` has none."""
        if name in _NATIVE:
            return self._awaited(getattr(self, "_a_" + name)(*args, **kwargs))
        if name in self.READS:
            return self._awaited(self._a_read(self.plan(name, *args, **kwargs)))
        return None

    def _wait(self, coro: Coroutine[Any, Any, T]) -> T:
        """`coro` run on the store's loop for a synchronous caller; StoreUnavailable once closed."""
        if self._closed:
            coro.close()
            raise self._closed_error()
        return self._loop.run(coro)

    async def _awaited(self, coro: Coroutine[Any, Any, T]) -> T:
        """`coro` run on a home connection of the awaiting loop when one is free (postgres_home.py),
        else on the store's loop. Either way it is not cancelled with the task awaiting it (see
        storeloop.py): it runs as a task of its own."""
        if self._closed:  # the store's loop is gone too: nothing to submit to
            coro.close()
            raise self._closed_error()
        loop = asyncio.get_running_loop()
        slot = self._home.take(loop) if loop is not self._loop.loop else None
        if slot is None:
            return await self._loop.submit(coro)
        task = loop.create_task(self._lent(slot, coro))
        task.add_done_callback(_retrieved)
        return await asyncio.shield(task)

    async def _lent(self, slot: Slot, coro: Coroutine[Any, Any, T]) -> T:
        CURRENT.set(slot)  # this task's context only: its flights use the slot's connection
        try:
            return await coro
        finally:
            self._home.give_back(slot)

    @asynccontextmanager
    async def unit_async(self, session: str | None = None, *, holder: str | None = None,
                         expires: float | None = None, fence: int | None = None) -> AsyncIterator[PostgresUnit]:
        """A unit of work for a coroutine (see base.Store.unit): the writes are gathered, then
        sent as one flight on the store's loop."""
        uow = self._new_unit()
        yield uow
        await self._awaited(self._a_commit(uow, session, holder, expires, fence))
        self._history.note(uow.noted)  # committed

    def _closed_error(self) -> StoreUnavailable:
        return StoreUnavailable(f"store {self.path} is closed")

    def _new_unit(self) -> PostgresUnit:
        if self._closed:
            raise self._closed_error()
        return PostgresUnit(self._history)

    # ------------------------------------------------------------ connections and errors

    async def _flight(self, send: Callable[[psycopg.AsyncConnection[Any], list[Any]], Awaitable[T]]) -> T:
        """`send(conn, sent)` on a pooled connection the server has not ended. `send` appends the
        cursor of its first statement to `sent`; when the connection breaks before that
        statement's result came back, the server ran nothing of the flight (its results come in
        order), so it is sent again on another connection: a connection ended while idle (a
        restart, a terminated backend) costs nothing. Any other failure is the caller's to see."""
        if self._closed or self.pool is None:
            raise self._closed_error()
        slot = CURRENT.get()
        for _ in range(self._retries + 1):
            async with slot.connection() if slot is not None else self.pool.connection() as conn:
                if _ended(conn):
                    await conn.close()  # the pool drops a closed connection
                    continue
                sent: list[Any] = []
                try:
                    return await send(conn, sent)
                except psycopg.OperationalError:
                    if not conn.broken or (sent and sent[0].pgresult is not None):
                        await self._rollback(conn)
                        raise
                except BaseException:
                    await self._rollback(conn)
                    raise
        raise psycopg.OperationalError("every pooled connection was found ended")

    @contextmanager
    def _errors(self, what: str, session: str | None) -> Iterator[None]:
        """Database failures as the store's errors (a failed check as its own error)."""
        try:
            yield
        except psycopg.errors.InvalidTextRepresentation as exc:
            raise (check_error(str(exc), session) or StoreError(f"store {self.path}: cannot {what}: {exc}")) from exc
        except (psycopg.errors.UniqueViolation, psycopg.errors.SerializationFailure) as exc:
            raise StoreConflict(f"store {self.path}: cannot {what}: {exc}") from exc
        except (pg_errors.UndefinedTable, pg_errors.UndefinedColumn) as exc:
            raise StoreCorrupt(session or "*", what, str(exc).splitlines()[0]) from exc
        except psycopg.DataError as exc:  # e.g. text the server cannot hold
            raise StoreError(f"store {self.path}: a value cannot be stored ({exc})") from exc
        except (psycopg.Error, PoolTimeout) as exc:
            raise StoreUnavailable(f"store {self.path}: cannot {what}: {exc}") from exc
        except UnicodeEncodeError as exc:  # a value the border should have refused: nothing is kept
            raise StoreError(f"store {self.path}: a value cannot be stored ({exc.reason})") from exc

    @staticmethod
    async def _rollback(conn: psycopg.AsyncConnection[Any]) -> None:
        if not conn.closed and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            try:
                await conn.execute("ROLLBACK")
            except psycopg.Error:
                pass  # a broken connection: the pool drops it, the server rolled back

    async def _one(self, what: str, session: str | None, sql: str, params: tuple[Any, ...],
                   fetch: bool = True) -> list[tuple[Any, ...]] | int:
        """One statement in its own transaction (autocommit): one round trip. Rows, or the row
        count when not `fetch`."""
        async def send(conn: psycopg.AsyncConnection[Any], sent: list[Any]) -> list[tuple[Any, ...]] | int:
            cur = await conn.execute(sql, params, prepare=True)  # one statement: failed means not run
            return await cur.fetchall() if fetch else cur.rowcount

        with self._errors(what, session):
            return await self._flight(send)

    # ------------------------------------------------------------ units of work and leases

    @contextmanager
    def unit(self, session: str | None = None, *, holder: str | None = None, expires: float | None = None,
             fence: int | None = None) -> Iterator[PostgresUnit]:
        """One transaction (see base.Store.unit), for synchronous callers."""
        uow = self._new_unit()
        yield uow
        self._wait(self._a_commit(uow, session, holder, expires, fence))
        self._history.note(uow.noted)  # committed

    async def _a_commit(self, uow: PostgresUnit, session: str | None, holder: str | None, expires: float | None,
                        fence: int | None) -> None:
        """The unit's flight: its statements (the lease check riding on the session row's) and its
        history appends, one transaction. In one flight with no Sync before its end (a pipeline in
        autocommit), PostgreSQL runs them as one implicit transaction: a failing statement skips
        the rest and the Sync rolls back, else the Sync commits; no BEGIN or COMMIT is sent. Only
        a unit that must first ask how much history is stored (a second flight, after a Sync) is
        wrapped in BEGIN and COMMIT, so both flights are one transaction."""
        async def send(conn: psycopg.AsyncConnection[Any], sent: list[Any]) -> None:
            two_flights = any(a.stored is None for a in uow.appends)

            def mark(cur: Any) -> Any:
                if not sent:
                    sent.append(cur)  # the flight's first statement: nothing ran until its result came back
                return cur

            async def run(sql: str, params: Any = None, prepare: bool | None = True) -> Any:
                return mark(await conn.execute(sql, params, prepare=prepare))

            async with conn.pipeline() as pipe:
                if two_flights:
                    await run("BEGIN", prepare=None)
                leased = holder is not None and session is not None
                for sql, params in uow.flight((expires or 0.0, session, holder, fence, fence) if leased else None):
                    await run(sql, params)
                unknown = [(a, await run(HISTORY_COUNTS, (a.session, a.session)))
                           for a in uow.appends if a.stored is None]
                counted: dict[int, Any] = {}
                if unknown:  # the only second flight: how much history is stored
                    await pipe.sync()
                    for appends, cur in unknown:
                        counted[id(appends)] = await cur.fetchone()
                for appends in uow.appends:
                    stored = appends.stored if appends.stored is not None else counted[id(appends)]
                    for table, rows in history_rows(appends, (int(stored[0]), int(stored[1]))):
                        async with conn.cursor() as cur:
                            await mark(cur).executemany(f"INSERT INTO {table} (session, seq, doc) VALUES (%s, %s, %s)",
                                                        rows)
                if two_flights:
                    await conn.execute("COMMIT")

        with self._errors("commit the unit of work", session):
            await self._flight(send)

    def acquire_lease(self, session: str, holder: str, now: float, ttl: float) -> Lease:
        """Take the lease when free, expired, held by a dead process of this host, or ours; each
        grant takes the next fencing token. A lease row locked beyond `lock_timeout` (a stuck
        transaction) is not granted: the session is busy, the worker is not frozen."""
        return self._wait(self._a_acquire_lease(session, holder, now, ttl))

    async def _a_acquire_lease(self, session: str, holder: str, now: float, ttl: float) -> Lease:
        try:
            async def send(conn: psycopg.AsyncConnection[Any], sent: list[Any]) -> tuple[Any, Any]:
                async with conn.pipeline():
                    grant = await conn.execute(_LEASE_GRANT, (session, session, holder, now + ttl, now), prepare=True)
                    sent.append(grant)
                    after = await conn.execute(_LEASE_NOW, (session, session, session), prepare=True)
                return await grant.fetchone(), await after.fetchone()

            with self._errors("take the lease of session " + session, session):
                (previous, granted), current = await self._flight(send)
                assert current is not None  # a LEFT JOIN of one row
                holder_now, until, version, head, turn, delivered, doc = current
                if granted is not None:
                    taken = previous is not None and previous != holder
                    last = reply_from(session, turn, delivered, doc) if turn is not None else None
                    return Lease(session, holder, now + ttl, True, version or 0, granted, taken, last=last,
                                 head=head)
                if holder_now is None or not holder_dead(holder_now):
                    return Lease(session, holder_now or "", until or now, False, version or 0)
                # held by a dead process of this host: take it over from that holder only
                rows = await self._one("take the lease of session " + session, session, _LEASE_TAKE,
                                       (holder, now + ttl, session, holder_now, session))
                assert isinstance(rows, list)
                fence, version, head = rows[0]
                if fence is None:  # someone else got there first
                    return Lease(session, "", now, False, version or 0)
                replies = await self._one("take the lease of session " + session, session, _LAST_REPLY, (session,))
                assert isinstance(replies, list)
                last = reply_from(session, *replies[0]) if replies else None
                return Lease(session, holder, now + ttl, True, version or 0, fence, True, last=last, head=head)
        except StoreUnavailable as exc:
            if isinstance(exc.__cause__, (pg_errors.LockNotAvailable, pg_errors.QueryCanceled)):
                return Lease(session, "", now, False)  # not decided in time: someone holds the row
            raise

    def renew_lease(self, session: str, holder: str, fence: int, expires: float) -> bool:
        """The heartbeat (see base.Store.renew_lease)."""
        return self._wait(self._a_renew_lease(session, holder, fence, expires))

    async def _a_renew_lease(self, session: str, holder: str, fence: int, expires: float) -> bool:
        count = await self._one("renew the lease of session " + session, session, _RENEW,
                                (expires, session, holder, fence), fetch=False)
        return count == 1

    def release_lease(self, session: str, holder: str, *, fence: int | None = None,
                      delivered_turn: int | None = None, trace_head: str | None = None) -> None:
        """Give the lease back, mark the reply delivered and store the chain head, together."""
        self._wait(self._a_release_lease(session, holder, fence=fence, delivered_turn=delivered_turn,
                                             trace_head=trace_head))

    async def _a_release_lease(self, session: str, holder: str, *, fence: int | None = None,
                               delivered_turn: int | None = None, trace_head: str | None = None) -> None:
        await self._one("release the lease of session " + session, session, _RELEASE,
                        (session, holder, fence, fence, trace_head, delivered_turn, session, trace_head, delivered_turn))

    def mark_delivered(self, session: str, turn: int) -> None:
        """The reply of `turn` reached its client."""
        self._wait(self._a_mark_delivered(session, turn))

    async def _a_mark_delivered(self, session: str, turn: int) -> None:
        await self._one("mark a reply of session " + session + " delivered", session, _DELIVERED, (session, turn),
                        fetch=False)

    def claim_nonce(self, nonce: str, now: float, keep: float) -> bool:
        """Record `nonce`; False when any worker recorded it before (see base.Store.claim_nonce)."""
        return self._wait(self._a_claim_nonce(nonce, now, keep))

    async def _a_claim_nonce(self, nonce: str, now: float, keep: float) -> bool:
        if self._nonce_sweep.due(now):
            await self._one("forget old request nonces", None, _NONCE_SWEEP, (now - keep,), fetch=False)
        return await self._one("record a request nonce", None, _NONCE, (nonce, now), fetch=False) == 1

    # ------------------------------------------------------------ reads

    def _rows(self, session: str, what: str, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._wait(self._a_rows(session, what, sql, params))

    async def _a_rows(self, session: str, what: str, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """One read statement, outside any transaction (one round trip)."""
        rows = await self._one(f"read {what} of session {session}", session, sql, params)
        assert isinstance(rows, list)
        return rows

    async def _a_read(self, plan: Any) -> Any:
        return plan.answer(await self._a_rows(plan.session, plan.what, plan.sql.replace("?", self.PARAM), plan.params))

    def get_session(self, session_id: str) -> SessionState | None:
        """The session with its history, or None; `StoreCorrupt` when a row cannot be read."""
        return self._wait(self._a_get_session(session_id))

    async def _a_get_session(self, session_id: str) -> SessionState | None:
        """One flight in one repeatable-read snapshot: the row, its history and its task ids."""
        async def send(conn: psycopg.AsyncConnection[Any], sent: list[Any]) -> tuple[Any, ...]:
            async with conn.pipeline():
                sent.append(await conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"))
                curs = [await conn.execute(sql, (session_id,), prepare=True) for sql in _SESSION_READS]
                await conn.execute("COMMIT")
            return (await curs[0].fetchone(), await curs[1].fetchall(), await curs[2].fetchall(),
                    await curs[3].fetchall())

        with self._errors(f"read session {session_id}", session_id):
            row, messages, entities, tasks = await self._flight(send)
        if row is None:
            return None
        doc = session_fields(row[0], session_id)
        history: dict[str, Any] = {"tasks": task_ids(tasks, doc.get("active_task") if row[2] else None)}
        for key, table, rows in (("user_messages", "messages", messages), ("entities", "entities", entities)):
            history[key] = history_items(((n, r[0]) for n, r in enumerate(rows, 1)), session_id, table)
        # what the store holds at this version: the next unit appends without asking
        self._history.note([(session_id, row[1], len(messages), len(entities))])
        return SessionState(**doc, **history, version=row[1])

    def load_or_create(self, state: SessionState, now: float) -> SessionState | None:
        """The stored session, or None once `state` was stored as new (see base.Store.load_or_create)."""
        return self._wait(self._a_load_or_create(state, now))

    async def _a_load_or_create(self, state: SessionState, now: float) -> SessionState | None:
        found = await self._a_get_session(state.id)
        if found is not None:
            return found
        uow = self._new_unit()
        uow.put_session(state, now)
        try:
            await self._a_commit(uow, state.id, None, None, None)
        except StoreConflict:  # created at this moment by another worker: read theirs
            state.version = 0
            found = await self._a_get_session(state.id)
            if found is None:
                raise
            return found
        self._history.note(uow.noted)
        return None

    def version_of(self, session_id: str) -> int:
        """The stored session's version (0 when absent): one indexed read, for a worker to tell
        whether its copy of a session is still the latest before using it."""
        return self._wait(self._a_version_of(session_id))

    async def _a_version_of(self, session_id: str) -> int:
        rows = await self._a_rows(session_id, "session", "SELECT version FROM sessions WHERE id = %s", (session_id,))
        return int(rows[0][0]) if rows else 0

    def sessions(self) -> list[tuple[str, float]]:
        """(id, last update) of every session, newest first."""
        return self._wait(self._a_sessions())

    async def _a_sessions(self) -> list[tuple[str, float]]:
        rows = await self._a_rows("*", "sessions", "SELECT id, updated FROM sessions ORDER BY updated DESC", ())
        return [(r[0], r[1]) for r in rows]

    def raw(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """A query for tools and tests; `?` placeholders (SQLite's) are accepted as well."""
        return self._wait(self._a_raw(sql, params))

    async def _a_raw(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if params and "?" in sql:
            sql = sql.replace("%", "%%").replace("?", "%s")
        async def send(conn: psycopg.AsyncConnection[Any], sent: list[Any]) -> list[tuple[Any, ...]]:
            cur = await conn.execute(sql, params or None)
            return [tuple(r) for r in await cur.fetchall()] if cur.description else []

        return await self._flight(send)

    def alive(self) -> bool:
        """False once closed (then this process's holders count as dead, see base.holder_dead)."""
        return not self._closed

    def close(self) -> None:
        """Close the home connections, the pool and the store's loop."""
        if self._closed:
            return
        self._closed = True
        self._close_quietly()
