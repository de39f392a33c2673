"""SQLite calls that cannot wait run on the runtime's loop; those that would wait go to the store's
thread (runtime/store/sqlite.py, `without_waiting`; runtime/store/offloop.py). A thread handoff
cost about a quarter of a direct turn; the loop must still never wait on a lock or a checkpoint."""
from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.seam.state import SessionState
from skillc.runtime.store import SQLiteStore, offloop
from skillc.runtime.store import sqlite as sqlite_store
from helpers.wait import wait_for


def _handoffs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the calls offloop hands to a store thread."""
    sent: list[str] = []
    real = offloop.executor_of

    class Counted:
        def __init__(self, pool: Any) -> None:
            self.pool = pool

        def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
            sent.append(getattr(getattr(fn, "func", fn), "__name__", repr(fn)))
            return self.pool.submit(fn, *args, **kwargs)

    monkeypatch.setattr(offloop, "executor_of", lambda store: Counted(real(store)))
    return sent


async def _turnlike(store: SQLiteStore, sid: str) -> SessionState:
    """What a turn asks of the store: open the session, take its lease, a leased unit, give it back."""
    state = SessionState(id=sid, platform={})
    found = await offloop.call(store, store.load_or_create, state, 1.0)
    state = found or state
    lease = await offloop.call(store, store.acquire_lease, sid, "h1", 1.0, 30.0)
    assert lease.granted
    state.user_messages.append({"turn": 1, "text": "hello"})
    async with offloop.unit(store, sid, holder="h1", expires=31.0, fence=lease.fence) as uow:
        uow.put_session(state, 2.0)
    await offloop.call(store, store.release_lease, sid, "h1", fence=lease.fence)
    return state


def test_an_uncontended_store_is_never_handed_to_its_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call of a turn went to the store thread before (four handoffs here, seven a turn)."""
    sent = _handoffs(monkeypatch)
    store = SQLiteStore(tmp_path / "s.sqlite")
    try:
        asyncio.run(_turnlike(store, "s1"))
        assert sent == []
        assert [m["text"] for m in store.get_session("s1").user_messages] == ["hello"]
    finally:
        store.close()


def test_a_write_lock_held_elsewhere_sends_the_call_to_the_thread_and_the_loop_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent = _handoffs(monkeypatch)
    path = tmp_path / "s.sqlite"
    store = SQLiteStore(path)
    other = sqlite3.connect(path, isolation_level=None)  # another process's connection, as far as SQLite knows
    state = SessionState(id="s1", platform={})
    with store.unit("s1") as uow:
        uow.put_session(state, 1.0)

    async def go() -> int:
        other.execute("BEGIN IMMEDIATE")  # the write lock, held
        ticks = 0
        state.user_messages.append({"turn": 1, "text": "hello"})

        async def write() -> None:
            async with offloop.unit(store, "s1") as uow:
                uow.put_session(state, 2.0)

        task = asyncio.create_task(write())
        while not sent:  # the unit found the lock taken and went to the store's thread
            await asyncio.sleep(0.005)
        for _ in range(5):  # meanwhile the loop runs: it is not waiting on the lock
            await asyncio.sleep(0.01)
            ticks += 1
        assert not task.done()
        other.execute("COMMIT")
        await task
        return ticks

    try:
        assert asyncio.run(go()) == 5
        assert sent == ["apply"]
        stored = store.get_session("s1")
        assert stored.version == 2 == state.version  # written once: the attempt on the loop did nothing
        assert [m["text"] for m in stored.user_messages] == ["hello"]
    finally:
        other.close()
        store.close()


def test_a_call_from_another_thread_in_progress_sends_the_loop_call_to_the_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent = _handoffs(monkeypatch)
    store = SQLiteStore(tmp_path / "s.sqlite")
    held, go_on = threading.Event(), threading.Event()

    def tool() -> None:  # a synchronous caller inside a unit, on its own thread
        with store.unit("s0") as uow:
            uow.put_session(SessionState(id="s0", platform={}), 1.0)
            held.set()
            go_on.wait(60)

    thread = threading.Thread(target=tool)
    thread.start()
    held.wait(60)

    async def go() -> None:
        task = asyncio.create_task(_turnlike(store, "s1"))
        while not sent:
            await asyncio.sleep(0.005)
        go_on.set()
        await task

    try:
        asyncio.run(go())
        thread.join(60)
        assert sent[0] == "load_or_create"
        assert store.get_session("s0") is not None and store.get_session("s1") is not None
    finally:
        go_on.set()
        store.close()


def test_a_synchronous_caller_still_waits_for_a_lock_after_a_call_that_could_not(tmp_path: Path) -> None:
    """The busy timeout is 0 only for a call made `without_waiting`: the next synchronous call
    waits for another connection's write lock instead of failing at once."""
    path = tmp_path / "s.sqlite"
    store = SQLiteStore(path)
    asyncio.run(_turnlike(store, "s1"))  # the loop's calls: busy timeout 0 on the connection
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    failed: list[BaseException] = []

    def tool() -> None:  # would raise StoreUnavailable ("database is locked") at once
        try:
            with store.unit("s2") as uow:
                uow.put_session(SessionState(id="s2", platform={}), 3.0)
        except BaseException as exc:
            failed.append(exc)

    def waiting() -> bool:  # the tool holds the connection (waiting on the lock), or is done already
        if not thread.is_alive():
            return True
        if store._lock.acquire(blocking=False):
            store._lock.release()
            return False
        return True

    thread = threading.Thread(target=tool)
    thread.start()
    try:
        wait_for(waiting, "the synchronous unit to start")
        other.execute("COMMIT")
        thread.join(60)
        assert failed == [] and store.get_session("s2") is not None
    finally:
        other.close()
        store.close()


def test_commits_on_the_loop_never_checkpoint_and_the_thread_checkpoints_every_so_often(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_store, "CHECKPOINT_EVERY", 10)
    sent = _handoffs(monkeypatch)
    path = tmp_path / "s.sqlite"
    store = SQLiteStore(path)
    assert store.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0  # a commit's own checkpoint: its fsyncs

    async def go() -> None:
        state = SessionState(id="s1", platform={})
        for n in range(25):
            state.user_messages.append({"turn": n, "text": "x" * 2000})
            async with offloop.unit(store, "s1") as uow:
                uow.put_session(state, float(n))

    try:
        asyncio.run(go())
        # after the 10th and the 20th commit, never awaited (a unit asked while one ran went to the thread too)
        assert sent.count("checkpoint") == 2 and set(sent) <= {"checkpoint", "apply"}, sent
        wait_for(lambda: store._commits < 10, "the checkpoint to run")
        busy, log, moved = store.db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert (busy, log - moved) == (0, 0)
    finally:
        store.close()


def test_a_memory_store_runs_on_the_loop_too(monkeypatch: pytest.MonkeyPatch) -> None:
    sent = _handoffs(monkeypatch)
    store = SQLiteStore(":memory:")
    try:
        asyncio.run(_turnlike(store, "s1"))
        assert sent == [] and not store.checkpoint_due()
    finally:
        store.close()


def test_only_calls_bounded_like_one_run_on_the_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan of the whole store (`sessions`, or any function offloop is handed that is not the
    store's or marked `offloop.bounded`) stays on the store's thread, even when it could not wait."""
    sent = _handoffs(monkeypatch)
    store = SQLiteStore(tmp_path / "s.sqlite")

    def scan() -> int:
        return len(store.sessions())

    async def go() -> None:
        await offloop.call(store, store.sessions)
        await offloop.call(store, scan)
        await offloop.call(store, offloop.bounded(lambda: store.version_of("s1")))

    try:
        asyncio.run(go())
        assert sent == ["sessions", "scan"]
    finally:
        store.close()
