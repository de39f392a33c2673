"""The PostgreSQL store's connections on the runtime's own event loop (its home), beside the pool
on the store's loop.

A call awaited through the store's loop (`storeloop.StoreLoop.submit`) crosses threads twice: the
call is handed to the store's thread and its result handed back, each a wake-up of the other
thread and a pass of the GIL. A booking turn sends six flights, and those handoffs were about a
quarter of its CPU in process (5.3-5.6 ms a turn, now 4.0-4.3: `bench/store_turn.py`). So the loop that awaits the store (`skillc serve`'s, a `Runtime`'s)
runs its calls on connections of its own:

- **The home** is the first loop that awaits a call, and the next one to await a call once that
  loop is closed (a test's `asyncio.run` after another's): a process serves from one loop. Every
  other loop, and every synchronous caller, goes through the store's loop as before.
- **A call takes a connection for its whole coroutine** (a lease decision, a unit and its second
  flight, a read and then a create): an idle one, or a slot to connect one on the home loop while
  fewer than `size` are open. When all `size` are in use the call goes to the store's loop: it never
  waits for a home connection, so the home adds no queue of its own and holds at most `size`
  backends besides the pool's.
- **No background task**: a connection is made when a call needs one and kept idle after it; one
  the server ended is seen before use (`postgres._ended`) and replaced; one that is broken, or was
  left inside a transaction, is finished when given back, not kept. Closing finishes the idle
  connections at once, from any thread (libpq's finish: no round trip, nothing awaited); one in
  use is finished when its call gives it back. A store collected unclosed finishes them too.
"""
from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import psycopg


class Slot:
    """One home connection lent to one call: connected on first use, kept across its flights."""

    def __init__(self, home: HomeConnections, conn: psycopg.AsyncConnection[Any] | None, move: int) -> None:
        self.home, self.conn, self.move = home, conn, move  # move: which home lent it (HomeConnections._moves)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """The slot's connection (connected now when it has none); forgotten after this flight when
        it was closed or broke in it, so the next flight connects anew."""
        if self.conn is None:
            self.conn = await psycopg.AsyncConnection.connect(self.home.url, **self.home.kwargs)
        conn = self.conn
        try:
            yield conn
        finally:
            if conn.closed or conn.broken:
                _finish(conn)
                self.conn = None


CURRENT: ContextVar[Slot | None] = ContextVar("skillc_pg_home_slot", default=None)


class HomeConnections:
    """At most `size` connections living on one event loop, lent one per call."""

    def __init__(self, url: str, kwargs: dict[str, Any], size: int) -> None:
        self.url, self.kwargs, self.size = url, kwargs, max(1, size)
        self._lock = threading.Lock()  # `close` may come from another thread
        self._loop: asyncio.AbstractEventLoop | None = None
        self._idle: list[psycopg.AsyncConnection[Any]] = []
        self._lent = 0  # slots out, connected or not
        self._moves = 0  # how often the home moved: a slot of an earlier home is not counted back
        self._closed = False
        # A store dropped unclosed: its idle connections are finished as it is collected (the
        # weak reference's callback runs before the connections' own finalizers, which would
        # warn of a connection deleted while open).
        weakref.finalize(self, _finish_all, self._idle)

    def take(self, loop: asyncio.AbstractEventLoop) -> Slot | None:
        """A slot for a call awaited on `loop`, or None: `loop` is not the home (another one is and
        is not closed), every connection is lent, or the store is closed."""
        with self._lock:
            if self._closed:
                return None
            if loop is not self._loop:
                if self._loop is not None and not self._loop.is_closed():
                    return None
                self._move(loop)
            if self._idle:
                self._lent += 1
                return Slot(self, self._idle.pop(), self._moves)
            if self._lent >= self.size:
                return None
            self._lent += 1
            return Slot(self, None, self._moves)

    def _move(self, loop: asyncio.AbstractEventLoop) -> None:
        """The home is now `loop`; the closed one's connections are finished (under the lock)."""
        for conn in self._idle:
            _finish(conn)
        self._idle.clear()
        self._lent = 0  # a closed loop runs nothing: what it lent is not waited for
        self._moves += 1
        self._loop = loop

    def give_back(self, slot: Slot) -> None:
        """The call is done with its slot: its connection is kept idle when healthy and the store is
        open, else finished."""
        conn, slot.conn = slot.conn, None
        with self._lock:
            if slot.move != self._moves:  # lent by a home that moved since
                if conn is not None:
                    _finish(conn)
                return
            self._lent -= 1
            if conn is None:
                return
            if self._closed or not _reusable(conn):
                _finish(conn)
                return
            self._idle.append(conn)

    @property
    def open(self) -> int:
        """Connections held now: idle and lent."""
        with self._lock:
            return len(self._idle) + self._lent

    def close(self) -> None:
        """Finish the idle connections; lent ones are finished when given back."""
        with self._lock:
            self._closed = True
            for conn in self._idle:
                _finish(conn)
            self._idle.clear()


def _reusable(conn: psycopg.AsyncConnection[Any]) -> bool:
    return (not conn.closed and not conn.broken
            and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE)


def _finish_all(conns: list[psycopg.AsyncConnection[Any]]) -> None:
    for conn in conns:
        _finish(conn)
    conns.clear()


def _finish(conn: psycopg.AsyncConnection[Any]) -> None:
    """Close `conn` without awaiting (what `AsyncConnection.close` does, less its pool check)."""
    try:
        conn.pgconn.finish()
    except Exception:  # already finished
        pass
