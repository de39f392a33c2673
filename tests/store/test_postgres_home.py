"""The PostgreSQL store's home connections (runtime/store/postgres_home.py): a call awaited on the
runtime's loop runs there, on a connection of that loop, with no thread handoff; at most
`pool_size` such connections, the rest spilling to the store's loop; the home moves to the next
loop once its own is closed; closing finishes them from any thread; a call whose awaiting task is
cancelled still ends, and gives its connection back."""
from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from pg_cluster import postgres_cluster, postgres_url  # noqa: F401  (fixtures)
from skillc.runtime.seam.state import SessionState
from skillc.runtime.store import StoreUnavailable, offloop
from skillc.runtime.store.postgres import PostgresStore
from skillc.runtime.store.storeloop import StoreLoop

DEADLINE = 30.0  # seconds: a bound on polling, never a pause


@pytest.fixture
def opener(postgres_url: str) -> Iterator[Callable[..., PostgresStore]]:  # noqa: F811
    opened: list[PostgresStore] = []

    def open_one(**kw: Any) -> PostgresStore:
        store = PostgresStore(postgres_url, **{"pool_size": 2, **kw})
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


async def _until(condition: Callable[[], object], what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def _activity(url: str, where: str) -> int:
    """Connections to the test's database (this one's not counted) that match `where`."""
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                            f"AND pid <> pg_backend_pid() AND {where}").fetchone()
    assert row is not None
    return int(row[0])


def _backends(url: str) -> int:
    return _activity(url, "true")


def _waiting(url: str) -> int:
    """Connections waiting on a lock."""
    return _activity(url, "wait_event_type = 'Lock'")


async def _turn(store: PostgresStore, session: str, n: float) -> None:
    """What a turn asks of the store: the session, the lease, a unit under it, the lease back."""
    await offloop.call(store, store.load_or_create, SessionState(id=session, platform={}), n)
    lease = await offloop.call(store, store.acquire_lease, session, "h-1", n, 30.0)
    assert lease.granted
    state = await offloop.call(store, store.get_session, session)
    assert state is not None
    state.values["n"] = str(n)
    async with offloop.unit(store, session, holder="h-1", expires=n + 30.0, fence=lease.fence) as uow:
        uow.put_session(state, n)
    await offloop.call(store, store.release_lease, session, "h-1", fence=lease.fence)


def test_an_awaited_call_runs_on_the_awaiting_loop_with_no_thread_handoff(
        opener: Callable[..., PostgresStore], monkeypatch: pytest.MonkeyPatch) -> None:
    store = opener()
    ran_on: list[threading.Thread] = []
    handed: list[int] = []
    flight, submit = PostgresStore._flight, StoreLoop.submit

    async def counted_flight(self: Any, send: Any) -> Any:
        ran_on.append(threading.current_thread())
        return await flight(self, send)

    def counted_submit(self: Any, coro: Any) -> Any:
        handed.append(1)
        return submit(self, coro)

    monkeypatch.setattr(PostgresStore, "_flight", counted_flight)
    monkeypatch.setattr(StoreLoop, "submit", counted_submit)

    async def go() -> None:
        for n in range(3):
            await _turn(store, "s1", float(n + 1))

    asyncio.run(go())
    assert ran_on and set(ran_on) == {threading.main_thread()}, ran_on
    assert not handed
    assert store.get_session("s1").values == {"n": "3.0"}  # a synchronous caller: the store's loop
    assert store._home.open == 1  # one call at a time: one connection, kept for the next


def test_the_home_lends_at_most_pool_size_connections_and_the_rest_go_to_the_store_loop(
        opener: Callable[..., PostgresStore], postgres_url: str) -> None:  # noqa: F811
    store = opener(pool_size=2, lock_timeout=20.0)
    lease = store.acquire_lease("busy", "h-0", 1.0, 1.0)  # expired by the time the others ask
    assert lease.granted
    holder = psycopg.connect(postgres_url)
    holder.execute("SELECT 1 FROM leases WHERE session = 'busy' FOR UPDATE")  # a stuck writer

    async def go() -> list[Any]:
        asks = [asyncio.ensure_future(offloop.call(store, store.acquire_lease, "busy", f"h-{n}", 10.0, 30.0))
                for n in range(1, 4)]
        await _until(lambda: _waiting(postgres_url) == 3, "three lease decisions to wait on the row")
        lent = store._home.open
        holder.commit()
        return [lent, *await asyncio.gather(*asks)]

    try:
        lent, *leases = asyncio.run(go())
    finally:
        holder.close()
    assert lent == 2  # the third waited on the store's loop, not for a home connection
    assert sorted(lease.granted for lease in leases) == [False, False, True]
    assert store._home.open == 2


def test_the_home_moves_to_the_next_loop_once_its_own_is_closed(opener: Callable[..., PostgresStore],
                                                              postgres_url: str) -> None:  # noqa: F811
    store = opener()
    asyncio.run(_turn(store, "s1", 1.0))
    after_first = _backends(postgres_url)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(_turn(store, "s1", 2.0))
        gc.collect()
    assert _backends(postgres_url) == after_first  # the first loop's connection was finished, not left open
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)], [str(w.message) for w in caught]
    assert store.get_session("s1").values == {"n": "2.0"}


def test_a_loop_that_is_not_the_home_goes_to_the_store_loop(opener: Callable[..., PostgresStore]) -> None:
    store = opener()
    home = asyncio.new_event_loop()
    try:
        home.run_until_complete(_turn(store, "s1", 1.0))  # the home, still open
        other: list[BaseException] = []

        def elsewhere() -> None:
            try:
                asyncio.run(_turn(store, "s2", 2.0))
            except BaseException as exc:  # noqa: BLE001 - handed to the test
                other.append(exc)

        worker = threading.Thread(target=elsewhere)
        worker.start()
        worker.join(DEADLINE)
        assert not other, other
        assert store._home.open == 1  # nothing lent to the other loop
        assert store.get_session("s2").values == {"n": "2.0"}
    finally:
        home.close()


def test_a_home_connection_the_server_ended_is_replaced_before_use(opener: Callable[..., PostgresStore],
                                                                   postgres_url: str) -> None:  # noqa: F811
    store = opener()

    async def go() -> None:
        await _turn(store, "s1", 1.0)
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        await _turn(store, "s1", 2.0)  # no error: the ended connection is seen idle and replaced

    asyncio.run(go())
    assert store.get_session("s1").values == {"n": "2.0"}


def test_closing_from_another_thread_finishes_the_home_connections(opener: Callable[..., PostgresStore],
                                                                   postgres_url: str) -> None:  # noqa: F811
    store = opener()

    async def go() -> None:
        await _turn(store, "s1", 1.0)
        closer = threading.Thread(target=store.close)
        closer.start()
        closer.join(DEADLINE)
        with pytest.raises(StoreUnavailable):
            await offloop.call(store, store.get_session, "s1")

    asyncio.run(go())
    assert _backends(postgres_url) == 0
    with pytest.raises(StoreUnavailable):  # a synchronous caller too: a clear error, not a closed loop's
        store.acquire_lease("s1", "h-1", 2.0, 30.0)


def test_a_call_whose_awaiting_task_is_cancelled_ends_and_gives_its_connection_back(
        opener: Callable[..., PostgresStore], postgres_url: str) -> None:  # noqa: F811
    store = opener(lock_timeout=20.0)
    with store.unit("s1") as uow:
        uow.put_session(SessionState(id="s1", platform={}), 1.0)
    holder = psycopg.connect(postgres_url)
    holder.execute("SELECT 1 FROM sessions WHERE id = 's1' FOR UPDATE")

    async def write() -> None:
        state = await offloop.call(store, store.get_session, "s1")
        assert state is not None
        state.values["k"] = "kept"
        async with offloop.unit(store, "s1") as uow:
            uow.put_session(state, 2.0)

    async def go() -> None:
        task = asyncio.ensure_future(write())
        await _until(lambda: _waiting(postgres_url) == 1, "the unit to wait on the row")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        holder.commit()
        await _until(lambda: store.get_session("s1").values == {"k": "kept"}, "the unit to commit on its own")
        await _until(lambda: store._home._lent == 0, "the connection to be given back")

    try:
        asyncio.run(go())
    finally:
        holder.close()
    assert store._home.open == 1


def test_a_store_dropped_unclosed_finishes_its_home_connections_without_a_warning(postgres_url: str) -> None:  # noqa: F811
    store = PostgresStore(postgres_url, pool_size=2)
    asyncio.run(_turn(store, "s1", 1.0))
    home = store._home
    assert home.open == 1
    conns = list(home._idle)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del store, home
        gc.collect()
    assert all(conn.closed for conn in conns)
    assert not [w for w in caught if "deleted while still open" in str(w.message)], [str(w.message) for w in caught]
