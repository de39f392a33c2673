"""No store call freezes a worker, and a lease is never left behind (issue 25, findings 5 and 6).

Real `skillc serve` workers on one real PostgreSQL database. A session's lease row is held by a
transaction of the test (a stuck writer): the run asking for it waits on a store thread, not on
the event loop, so `/healthz` and an unrelated session's turn go on, on that worker and on the
other one asking for the same session; the stuck run ends `SESSION_BUSY` once the store's
`lock_timeout` is up. A database whose backends hang (SIGSTOP) gets `/readyz` "store down" at
once. A lease release that fails (a trigger refuses it once) is retried: the session is not busy
after the turn.
"""
from __future__ import annotations

import os
import signal
import threading
from typing import Any

import httpx
import psycopg

from helpers.serve_workers import Caller, outcome, reply_text
from helpers.wait import wait_for
from pg_cluster import execute, query
from test_scale_out import _call, compiled  # noqa: F401  (a fixture)
from test_scale_out_durable import _refused, cluster, fake_model, farm  # noqa: F401  (fixtures)


def _book(caller: Caller, fake_model: Any, worker: Any, thread: str, n: int) -> dict[str, Any]:
    """One booking turn (a write, then finish) of `thread` on `worker`."""
    fake_model.add(_call("ledger_post", ref=f"R-{thread}-{n}", amount=n + 1),
                   _call("builtin_node_finish", output=f"booked {thread}-{n}"))
    return caller.run(worker, thread, f"{thread}-{n}", f"Book {n + 1} under reference R-{thread}-{n}")


def _quick(worker: Any, path: str) -> httpx.Response:
    return httpx.get(worker.url + path, timeout=2.0)  # a frozen loop would not answer in 2 s


def test_a_session_stuck_on_a_row_lock_freezes_neither_worker(farm: dict[str, Any], fake_model: Any) -> None:
    a, b = farm["workers"]({"lock_timeout": 10.0}, {"lock_timeout": 10.0})
    caller, url = farm["caller"], farm["url"]
    assert outcome(_book(caller, fake_model, a, "stuck", 0)) == {"type": "success"}
    stuck = psycopg.connect(url)  # a writer that holds the session's lease row and never ends
    try:
        stuck.execute("INSERT INTO leases (session, holder, expires) VALUES ('stuck', 'someone', 0) "
                      "ON CONFLICT (session) DO UPDATE SET holder = 'someone'")
        runs: dict[str, Any] = {}
        threads = [threading.Thread(target=lambda w=w: runs.__setitem__(w.name, Caller().run(
            w, "stuck", f"stuck-{w.name}", "Book 9 under reference R-stuck-9"))) for w in (a, b)]
        for t in threads:
            t.start()
        wait_for(lambda: len(query(url, "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                        "AND datname = current_database()")) == 2, "both workers to wait on the row")
        for w in (a, b):
            for _ in range(5):
                assert _quick(w, "/healthz").status_code == 200
            assert _quick(w, "/readyz").status_code == 200
        other = _book(caller, fake_model, a, "other", 1)  # an unrelated session, same worker
        assert outcome(other) == {"type": "success"} and reply_text(other) == "booked other-1", other
        for t in threads:
            t.join(90)
        assert {name: _refused(run) for name, run in runs.items()} == {"w0": "SESSION_BUSY", "w1": "SESSION_BUSY"}
    finally:
        stuck.close()


def test_readyz_says_the_store_is_down_at_once_when_the_database_hangs(farm: dict[str, Any]) -> None:
    (a,) = farm["workers"]({})
    url = farm["url"]
    assert _quick(a, "/readyz").status_code == 200
    pids = [p for (p,) in query(url, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                                     "AND pid <> pg_backend_pid()")]
    assert pids  # the worker's pooled connections
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        ready = _quick(a, "/readyz")
        assert ready.status_code == 503 and ready.json()["store"]["ok"] is False, ready.text
        assert _quick(a, "/healthz").status_code == 200
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    wait_for(lambda: _quick(a, "/readyz").status_code == 200, "the store to answer again")


FAIL_ONE_RELEASE = (
    "CREATE SEQUENCE releases_seen",
    "CREATE FUNCTION fail_first_release() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "IF nextval('releases_seen') = 1 THEN RAISE EXCEPTION 'injected: the release fails once'; END IF; "
    "RETURN OLD; END $$",
    "CREATE TRIGGER fail_first_release BEFORE DELETE ON leases FOR EACH ROW EXECUTE FUNCTION fail_first_release()",
)


def test_a_failed_lease_release_is_retried_and_leaves_the_session_free(farm: dict[str, Any],
                                                                       fake_model: Any) -> None:
    a, b = farm["workers"]({}, {})
    caller, url = farm["caller"], farm["url"]
    assert outcome(_book(caller, fake_model, a, "rel", 0)) == {"type": "success"}  # schema and session exist
    for statement in FAIL_ONE_RELEASE:
        execute(url, statement)
    assert reply_text(_book(caller, fake_model, a, "rel", 1)) == "booked rel-1"
    assert query(url, "SELECT last_value FROM releases_seen") == [(2,)]  # refused once, then given back
    wait_for(lambda: query(url, "SELECT holder FROM leases WHERE session = 'rel'") == [], "the lease to be free",
             deadline=10)
    after = _book(caller, fake_model, b, "rel", 2)
    assert _refused(after) is None and reply_text(after) == "booked rel-2", after


def test_an_earlier_tasks_evidence_read_from_a_locked_table_freezes_no_worker(farm: dict[str, Any],
                                                                              fake_model: Any) -> None:
    """`TurnEnv.find_evidence` (an earlier task's record, asked for by id) reads the store off the
    event loop: while that read waits on a locked table, `/healthz` answers."""
    (a,) = farm["workers"]({"lock_timeout": 10.0})
    caller, url = farm["caller"], farm["url"]
    assert outcome(_book(caller, fake_model, a, "ev", 0)) == {"type": "success"}  # e1, in task t1
    fake_model.add(_call("builtin_evidence_get", evidenceId="e1"))
    stuck = psycopg.connect(url)  # a transaction holding the evidence table: every read of it waits
    try:
        stuck.execute("LOCK TABLE evidence IN ACCESS EXCLUSIVE MODE")
        result: dict[str, Any] = {}
        later = threading.Thread(target=lambda: result.__setitem__(
            "run", Caller().run(a, "ev", "ev-1", "Show me what e1 was")))
        later.start()
        wait_for(lambda: len(query(url, "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                        "AND datname = current_database()")) == 1, "the read to wait on the table")
        for _ in range(5):
            assert _quick(a, "/healthz").status_code == 200
    finally:
        stuck.close()
    later.join(90)
    results = [e["content"] for e in result["run"]["events"] if e["type"] == "TOOL_CALL_RESULT"]
    assert results and '\\"ref\\": \\"R-ev-0\\"' in results[0], results  # e1, read from the store
