"""What the PostgreSQL store adds to the shared contract: racing workers, a kill -9'ed lease holder
on "another host", concurrent first opens, a dropped connection, and the config that selects it.

Each test runs on its own database of the session's throw-away cluster (tests/pg_cluster.py);
without PostgreSQL they are skipped with the reason.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.wait import wait_for
from pg_cluster import postgres_cluster, postgres_url  # noqa: F401  (fixtures)
from skillc.runtime.outside.config import parse_config
from skillc.runtime.seam.state import Evidence, SessionState, TaskState
from skillc.runtime.store import SCHEMA_VERSION, LeaseLost, StoreConflict, StoreUnavailable, new_holder, open_store

DEADLINE = 30.0  # seconds: a bound on polling, never a pause
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def opener(postgres_url: str) -> Iterator[Callable[[], Any]]:
    """Opens PostgresStores on the test's database (each one a "worker"); closes them at the end."""
    from skillc.runtime.store.postgres import PostgresStore

    opened: list[Any] = []

    def open_one() -> Any:
        store = PostgresStore(postgres_url, pool_size=2)
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


def _catch(action: Callable[[], Any], into: list[BaseException]) -> None:
    try:
        action()
    except BaseException as exc:  # the test looks at it
        into.append(exc)


def _race(n: int, action: Callable[[int], Any]) -> list[Any]:
    """Run `action(i)` in n threads released together; results (or exceptions) in order."""
    barrier = threading.Barrier(n)
    out: list[Any] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            out[i] = action(i)
        except Exception as exc:  # the race's loser reports, it does not crash the thread
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_open_store_picks_postgres_for_a_url_and_concurrent_first_opens_migrate_once(postgres_url: str) -> None:
    """Six workers opening a new database at once: all open it, one schema, version SCHEMA_VERSION."""
    stores = _race(6, lambda i: open_store(postgres_url, pool_size=1))
    try:
        assert all(type(s).__name__ == "PostgresStore" for s in stores), stores
        assert stores[0].raw("SELECT version FROM skillc_schema") == [(SCHEMA_VERSION,)]
    finally:
        for s in stores:
            if not isinstance(s, Exception):
                s.close()


def test_racing_workers_one_lease_one_new_session_one_evidence_id(opener: Callable[[], Any]) -> None:
    """Eight workers race for one session's lease, then for creating it, then for one evidence
    counter value: one winner each time, the others refused cleanly, nothing overwritten."""
    workers = [opener() for _ in range(8)]
    holders = [new_holder() for _ in workers]
    leases = _race(8, lambda i: workers[i].acquire_lease("s1", holders[i], now=100.0, ttl=60.0))
    assert sum(1 for lease in leases if lease.granted) == 1
    winner = next(i for i, lease in enumerate(leases) if lease.granted)
    assert {lease.holder for lease in leases} == {holders[winner]}

    def create(i: int) -> str:
        with workers[i].unit("s1") as uow:
            uow.put_session(SessionState(id="s1", platform={"worker": i}), 1.0)
        return "created"

    created = _race(8, create)
    assert created.count("created") == 1 and sum(isinstance(r, StoreConflict) for r in created) == 7

    def allocate(i: int) -> str:
        # Each worker read the session (version 1) and takes evidence id e<next>: only the lease
        # holder's unit gets through; the others are fenced before writing anything.
        state = workers[i].get_session("s1")
        eid = f"e{state.next_evidence}"
        state.next_evidence += 1
        with workers[i].unit("s1", holder=holders[i], expires=200.0) as uow:
            uow.put_evidence("s1", Evidence(id=eid, task="t1", node="n1", tool=f"w{i}", args={}, seq=1))
            uow.put_session(state, 2.0)
        return eid

    allocated = _race(8, allocate)
    assert allocated[winner] == "e1"
    assert all(isinstance(r, LeaseLost) for i, r in enumerate(allocated) if i != winner)
    back = workers[0].evidence_of("s1")
    assert [(e.id, e.tool) for e in back] == [("e1", f"w{winner}")]
    assert workers[0].get_session("s1").next_evidence == 2
    assert workers[1].version_of("s1") == 2 and workers[1].version_of("nope") == 0


def test_a_kill_9_worker_on_another_host_keeps_its_lease_until_it_expires(opener: Callable[[], Any],
                                                                          postgres_url: str, tmp_path: Path) -> None:
    """A worker (a real process posing as another host, so no same-host pid check can help) takes a
    short lease and is killed with SIGKILL: its lease stands until its expiry (nothing tied to a
    connection decides liveness), then the next worker takes it over with a larger fencing token."""
    script = textwrap.dedent("""
        import socket, sys, time
        socket.gethostname = lambda: "other-host"
        from skillc.runtime.store import new_holder, open_store
        store = open_store(sys.argv[1])
        holder = new_holder()
        lease = store.acquire_lease("s1", holder, now=time.time(), ttl=3.0)
        assert lease.granted
        print(holder, lease.fence, lease.expires, flush=True)
        sys.stdin.read()  # hold it until killed
    """)
    err = tmp_path / "worker.err"
    with open(err, "wb") as errors:
        proc = subprocess.Popen([sys.executable, "-c", script, postgres_url], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=errors, text=True, cwd=REPO)
    try:
        holder, fence, expires = proc.stdout.readline().split()
        assert holder.startswith("other-host:"), (holder, err.read_text())
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    store = opener()
    refused = store.acquire_lease("s1", new_holder(), now=float(expires) - 0.5, ttl=30.0)
    assert not refused.granted and refused.holder == holder  # dead, but its lease has not expired
    mine = new_holder()
    taken = store.acquire_lease("s1", mine, now=float(expires) + 0.01, ttl=30.0)
    assert taken.granted and taken.taken_over and taken.fence > int(fence)
    with store.unit("s1", holder=mine, fence=taken.fence, expires=time.time() + 30) as uow:
        uow.put_session(SessionState(id="s1", platform={}), 1.0)
    with pytest.raises(LeaseLost):  # the old token fences the old holder out, whatever it holds
        with store.unit("s1", holder=mine, fence=int(fence), expires=time.time() + 30) as uow:
            uow.put_session(store.get_session("s1"), 2.0)


def test_a_database_restart_does_not_free_a_live_holders_lease(opener: Callable[[], Any],
                                                              postgres_cluster: Any) -> None:
    """The server restarts (every connection gone) while a holder's lease runs: another worker is
    still refused, and the holder's renewal and next unit work on fresh connections."""
    url = postgres_cluster.new_database("restart")
    holding, other = open_store(url), open_store(url)
    try:
        with holding.unit("s1") as uow:
            uow.put_session(SessionState(id="s1", platform={}), 1.0)
        mine = new_holder()
        lease = holding.acquire_lease("s1", mine, now=time.time(), ttl=60.0)
        assert lease.granted
        postgres_cluster.restart("immediate")
        assert not other.acquire_lease("s1", new_holder(), now=time.time(), ttl=60.0).granted
        assert holding.renew_lease("s1", mine, lease.fence, time.time() + 60)
        with holding.unit("s1", holder=mine, fence=lease.fence, expires=time.time() + 60) as uow:
            uow.put_session(holding.get_session("s1"), 2.0)
        assert other.version_of("s1") == 2  # committed before the restart and after it: both kept
    finally:
        holding.close()
        other.close()


def test_a_dropped_connection_fails_one_unit_cleanly_and_the_next_works(opener: Callable[[], Any],
                                                                        postgres_url: str) -> None:
    """The server ends every connection of the store (a failover, a restart): the next unit runs on
    fresh connections; a connection killed inside a unit fails that unit with StoreUnavailable,
    leaving nothing of it, and the unit after it works."""
    import psycopg

    store = opener()
    with store.unit("s1") as uow:
        uow.put_session(SessionState(id="s1", platform={}), 1.0)
    state = store.get_session("s1")
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE datname = current_database() AND pid <> pg_backend_pid()")
    # Dead pooled connections are replaced at BEGIN, before anything of the unit ran.
    with store.unit("s1") as uow:
        state.values["k"] = "v"
        uow.put_session(state, 2.0)
    assert store.get_session("s1").values == {"k": "v"}
    # Killed after BEGIN, inside the unit (its flight waits on the session row, locked by another
    # transaction): that unit is refused and left nothing; the next works.
    holder = psycopg.connect(postgres_url)
    try:
        holder.execute("SELECT 1 FROM sessions WHERE id = 's1' FOR UPDATE")

        def doomed() -> None:
            with store.unit("s1") as uow:
                state.values["k"] = "lost"
                uow.put_session(state, 3.0)
                uow.put_task(TaskState(id="t1", session="s1", agent="a", message="m"))

        failed: list[BaseException] = []
        worker = threading.Thread(target=lambda: _catch(doomed, failed))
        worker.start()
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            wait_for(lambda: admin.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                           "AND datname = current_database()").fetchone() == (1,),
                     "the unit to wait on the row")
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                          "AND datname = current_database()")
        worker.join(DEADLINE)
        assert [type(e) for e in failed] == [StoreUnavailable], failed
    finally:
        holder.close()
    state = store.get_session("s1")
    assert state.values == {"k": "v"} and store.get_task("s1", "t1") is None
    with store.unit("s1") as uow:
        uow.put_task(TaskState(id="t1", session="s1", agent="a", message="m"))
    assert store.get_task("s1", "t1") is not None


def test_config_selects_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`[store] url` wins over `path`; $SKILLC_STORE_URL wins over both; a non-postgres url is refused."""
    monkeypatch.delenv("SKILLC_STORE_URL", raising=False)
    config = parse_config('[store]\npath = "s.db"\n', tmp_path / "skillc.toml")
    assert config.store.target() == str(tmp_path / "s.db")
    config = parse_config('[store]\nurl = "postgresql://app@db/skillc"\n', tmp_path / "skillc.toml")
    assert config.store.target() == "postgresql://app@db/skillc"
    monkeypatch.setenv("SKILLC_STORE_URL", "postgresql://env@db/other")
    assert config.store.target() == "postgresql://env@db/other"
    from skillc.runtime.outside.config import ConfigError

    with pytest.raises(ConfigError, match="postgresql://"):
        parse_config('[store]\nurl = "sqlite:///x.db"\n', tmp_path / "skillc.toml")


def test_a_schema_named_in_the_url_holds_the_store(postgres_url: str) -> None:
    """`?options=-csearch_path%3Dname` puts skillc's tables in that schema (one database, several
    deployments), and `path` (what messages name) never shows a password."""
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA tenant_a")
    store = open_store(postgres_url + "&options=-csearch_path%3Dtenant_a")
    try:
        with store.unit("s1") as uow:
            uow.put_session(SessionState(id="s1", platform={}), 1.0)
    finally:
        store.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        where = conn.execute("SELECT DISTINCT table_schema FROM information_schema.tables "
                             "WHERE table_name IN ('sessions', 'leases', 'skillc_schema')").fetchall()
    assert where == [("tenant_a",)]
    from skillc.runtime.store.postgres import _redact

    assert _redact("postgresql://app:s3cret@db:5432/skillc") == "postgresql://app:***@db:5432/skillc"


def test_store_pool_size_reaches_the_postgres_pool(tmp_path: Path, postgres_url: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`[store] pool_size` is the PostgreSQL pool's size in a runtime opened from the config; it is
    refused below 1 and means nothing to a SQLite store."""
    import asyncio

    from skillc.runtime import open_runtime
    from skillc.runtime.outside.config import ConfigError

    monkeypatch.delenv("SKILLC_STORE_URL", raising=False)
    config = parse_config(f'[store]\nurl = "{postgres_url}"\npool_size = 3\n', tmp_path / "skillc.toml")
    assert config.store.pool_size == 3 and config.store.options() == {"pool_size": 3}
    assert parse_config('[store]\npath = "s.db"\npool_size = 3\n', tmp_path / "skillc.toml").store.options() == {}
    with pytest.raises(ConfigError, match="pool_size"):
        parse_config('[store]\npool_size = 0\n', tmp_path / "skillc.toml")

    async def pool_max() -> int:
        async with open_runtime(config, studio=object(), gateway=object(), model=object()) as runtime:
            return int(runtime.store.pool.max_size)

    assert asyncio.run(pool_max()) == 3


def test_a_schema_5_database_continues_its_chain_replies_and_active_task(postgres_url: str) -> None:
    """A database an earlier release left at schema 5 (its chain head in `trace_heads`, its open
    active task in its own row, a delivered reply): opened now, the head is the session row's,
    the task is read from its row and then carried by the session row, the session goes on."""
    import psycopg

    from skillc.runtime.store.postgres import PostgresStore
    from skillc.runtime.store.postgres_schema import MIGRATIONS

    task_doc = ('{"id": "t1", "session": "s1", "agent": "a", "message": "hi", "state": "RUNNING", "order": [], '
                '"nodes": {}}')
    with psycopg.connect(postgres_url, autocommit=True) as conn, conn.transaction():
        for step in MIGRATIONS[:5]:
            step(conn)
        conn.execute("CREATE TABLE skillc_schema (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO skillc_schema (version) VALUES (5)")
        conn.execute("""INSERT INTO sessions (id, doc, updated, version) VALUES
                        ('s1', '{"id": "s1", "platform": {}, "active_task": "t1"}', 1.0, 1)""")
        conn.execute("INSERT INTO trace_heads (session, head) VALUES ('s1', %s)", ("ab" * 32,))
        conn.execute("INSERT INTO tasks (id, session, doc, n, state) VALUES ('t1', 's1', %s, 1, 'RUNNING')",
                     (task_doc,))
        conn.execute("""INSERT INTO replies (session, turn, delivered, doc) VALUES (%s, 1, 1, '{"text": "one"}')""",
                     ("s1",))
    store = PostgresStore(postgres_url, pool_size=2)
    try:
        assert store.raw("SELECT version FROM skillc_schema") == [(SCHEMA_VERSION,)]
        assert store.trace_head("s1") == "ab" * 32 and store.last_reply("s1").delivered
        state, task = store.get_session("s1"), store.get_task("s1", "t1")
        assert state is not None and state.tasks == ["t1"] and task is not None and task.state == "RUNNING"
        h = new_holder()
        lease = store.acquire_lease("s1", h, now=10.0, ttl=30.0)
        assert lease.granted and lease.head == "ab" * 32 and lease.version == 1
        task.message = "hi again"
        with store.unit("s1", holder=h, fence=lease.fence, expires=40.0) as uow:
            uow.put_session(state, 11.0, task)
            uow.put_trace_head("s1", "cd" * 32)
        store.release_lease("s1", h, fence=lease.fence, delivered_turn=1, trace_head="ef" * 32)
        assert store.trace_head("s1") == "ef" * 32 and store.version_of("s1") == 2
        assert store.get_task("s1", "t1").message == "hi again"
        assert [t.message for t in store.open_tasks("s1")] == ["hi again"]
    finally:
        store.close()
