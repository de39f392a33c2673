"""Write-once across workers when workers stall, die or lose the database (issue 25).

Real `skillc serve` processes on one real PostgreSQL database, each with its own ledger MCP server
process; every `tools/call` is counted at the ledger (tests/helpers/serve_workers.py). Faults are
real: SIGKILL and SIGSTOP of a worker, a server restart, terminated backends, a row locked by
another transaction. Where a fault must hit a precise moment of a write, the test database holds
a trigger that pauses (or fails) that statement, and the test waits on the database's own view
of it (pg_stat_activity), never on a sleep.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.serve_workers import (
    Caller,
    Worker,
    end_ledger_servers,
    invocations,
    outcome,
    reply_text,
    start_workers,
    write_config,
)
from helpers.wait import wait_for
from pg_cluster import execute, query, require_cluster
from test_scale_out import _ask_approval, _call, _confirm, _custom, _interrupt, compiled  # noqa: F401

@pytest.fixture(scope="module")
def cluster(pytestconfig: pytest.Config) -> Any:
    """The test session's PostgreSQL cluster."""
    return require_cluster(pytestconfig)


@pytest.fixture
def fake_model() -> Iterator[Any]:
    """A fake model server of the test's own (canned answers in order, for every worker)."""
    from skillc.model_stub import FakeOpenAIServer

    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def farm(compiled: Path, cluster: Any, fake_model: Any, tmp_path: Path) -> Iterator[dict[str, Any]]:  # noqa: F811
    """A new database and a way to start workers on it; everything is ended after the test."""
    url = cluster.new_database("durable")
    records = tmp_path / "ledger.sqlite"
    started: list[Worker] = []
    caller = Caller()

    def workers(*specs: dict[str, Any]) -> list[Worker]:
        configs = [write_config(tmp_path / f"w{len(started) + i}", model_url=fake_model.url, store=url,
                                records=records, **spec) for i, spec in enumerate(specs)]
        made = start_workers(compiled, configs)
        started.extend(made)
        return made

    try:
        yield {"url": url, "records": records, "workers": workers, "caller": caller, "cluster": cluster}
    finally:
        caller.close()
        for w in started:
            try:
                os.kill(w.proc.pid, signal.SIGCONT)  # a stopped worker cannot end otherwise
            except ProcessLookupError:
                pass
            w.stop()
        end_ledger_servers(records)


def _in_background(fn: Any) -> tuple[threading.Thread, dict[str, Any]]:
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["run"] = fn()
        except Exception as exc:  # a worker killed under its stream: that is the point
            result["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def _refused(run: dict[str, Any]) -> str | None:
    """The error code of a run refused before or as its turn began (409, or RUN_ERROR in the
    stream when the lease was refused after the run started), else None."""
    if run["status"] != 200:
        return str(run["error"]["code"])
    end = run["events"][-1] if run["events"] else {}
    return str(end.get("code")) if end.get("type") == "RUN_ERROR" else None


def _statuses(url: str) -> list[tuple[Any, ...]]:
    return query(url, "SELECT id, status FROM evidence WHERE doc LIKE '%ledger_post%' ORDER BY seq")


def test_a_write_in_flight_on_a_worker_that_dies_is_verified_by_one_that_only_looked(farm: dict[str, Any],
                                                                                     fake_model: Any) -> None:
    """Finding 1: worker B opens the session (a state read, a run refused as busy) while A's
    write is at the tool; A is SIGKILLed. B's next turn settles the write through verify before
    anything else, although B's copy of the session is the latest one (it never reloads)."""
    (a,) = farm["workers"]({"hang": True, "confirm_bypass": False})
    (b,) = farm["workers"]({"confirm_bypass": False})
    caller, records = farm["caller"], farm["records"]
    fake_model.add(*_ask_approval("R-4001", 810))
    interrupt = _interrupt(caller.run(a, "look", "look-1", "Book 810 under reference R-4001"))
    sender, _ = _in_background(lambda: Caller().run(a, "look", "look-2", resume=_confirm(interrupt)))
    wait_for(lambda: {"amount": 810, "ref": "R-4001"} in invocations(records, "ledger_post"),
             "the write to reach the ledger server")
    state = caller.get(b, "/api/sessions/look/state")  # B opens the session, as the console's poll does
    assert state.status_code == 200 and state.json()["evidence"]["e1"]["status"] == "STARTED", state.text
    busy = caller.run(b, "look", "look-3", "Is it booked?")
    assert _refused(busy) == "SESSION_BUSY", busy
    a.kill()
    sender.join(60)

    fake_model.add(_call("builtin_node_finish", output="R-4001 is booked"))
    later = caller.run(b, "look", "look-4", "Is it booked?")
    assert later["status"] == 200, later
    settled = _custom(later, "skillc.write_settled")
    assert [(s["evidence"], s["status"], s["via"]) for s in settled] == [("e1", "SUCCESS", "verify")], later
    assert outcome(later) == {"type": "success"} and "R-4001 is booked" in reply_text(later)
    assert invocations(records, "ledger_post") == [{"amount": 810, "ref": "R-4001"}]
    assert _statuses(farm["url"]) == [("e1", "SUCCESS")]


@pytest.mark.parametrize("fault", ["restart", "terminate"])
def test_a_database_fault_mid_write_does_not_hand_a_live_workers_session_to_another(
        farm: dict[str, Any], fake_model: Any, fault: str) -> None:
    """Finding 2: A's write is at a slow tool (it books 12 s after the call); the database
    restarts, or every connection is terminated. B is asked meanwhile: it is refused as busy (A's
    lease stands: liveness is its expiry, renewed by A's heartbeat, not a connection), and the
    write is settled once, by A, as the success it was."""
    (a,) = farm["workers"]({"delay": 12.0})
    (b,) = farm["workers"]({})
    caller, records, url = farm["caller"], farm["records"], farm["url"]
    fake_model.add(_call("ledger_post", ref="R-5001", amount=920), _call("builtin_node_finish", output="R-5001 booked"))
    sender, result = _in_background(lambda: Caller().run(a, "dbf", "dbf-1", "Book 920 under reference R-5001"))
    wait_for(lambda: {"amount": 920, "ref": "R-5001"} in invocations(records, "ledger_post"),
             "the write to reach the ledger server")
    if fault == "restart":
        farm["cluster"].restart("immediate")
    else:
        execute(url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                     "WHERE datname = current_database() AND pid <> pg_backend_pid()")
    codes: list[str | None] = []
    while sender.is_alive() and "SESSION_BUSY" not in codes:  # while A's write is at the tool
        assert len(codes) < 100, codes[-3:]
        codes.append(_refused(caller.run(b, "dbf", f"dbf-b{len(codes)}", "Is it booked?")))
        assert codes[-1] in ("SESSION_BUSY", "STORE_UNAVAILABLE"), codes  # never B's own turn
        sender.join(0.2)
    assert "SESSION_BUSY" in codes, codes
    sender.join(60)
    first = result["run"]
    assert outcome(first) == {"type": "success"} and "R-5001 booked" in reply_text(first), first
    assert [(s["evidence"], s["status"]) for s in _custom(first, "skillc.write_settled")] == [("e1", "SUCCESS")]
    assert invocations(records, "ledger_post") == [{"amount": 920, "ref": "R-5001"}]
    assert _statuses(url) == [("e1", "SUCCESS")]


SLOW_PREREG = (  # the first pre-registration's COMMIT waits 1.5 s in the database (a deferred trigger)
    "CREATE SEQUENCE prereg_paused",
    "CREATE FUNCTION pause_prereg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "IF NEW.status = 'STARTED' AND nextval('prereg_paused') = 1 THEN PERFORM pg_sleep(1.5); END IF; "
    "RETURN NEW; END $$",
    "CREATE CONSTRAINT TRIGGER pause_prereg AFTER INSERT OR UPDATE ON evidence "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pause_prereg()",
)


def test_a_worker_stalled_past_its_lease_between_pre_registration_and_call_sends_nothing(
        farm: dict[str, Any], fake_model: Any) -> None:
    """Finding 7: A's pre-registration commits while A is stopped (SIGSTOP, held there by a
    trigger that pauses the commit); A's 3 s lease expires and B takes the session over: B
    settles the write (verify: not booked) and books it. A, continued, sends nothing: its lease
    was taken over, the fence before the call says so. One booking at the tool."""
    (a,) = farm["workers"]({"lease_ttl": 3.0})
    (b,) = farm["workers"]({"lease_ttl": 3.0})
    caller, records, url = farm["caller"], farm["records"], farm["url"]
    for statement in SLOW_PREREG:
        execute(url, statement)
    fake_model.add(_call("ledger_post", ref="R-6001", amount=130))
    sender, result = _in_background(lambda: Caller().run(a, "stall", "stall-1", "Book 130 under reference R-6001"))
    wait_for(lambda: query(url, "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep' "
                                "AND datname = current_database()") != [], "A's pre-registration to commit")
    os.kill(a.proc.pid, signal.SIGSTOP)
    wait_for(lambda: _statuses(url) == [("e1", "STARTED")], "the pre-registration to be committed")
    expires = query(url, "SELECT expires FROM leases WHERE session = 'stall'")[0][0]
    wait_for(lambda: time.time() > expires + 0.2, "A's lease to expire", deadline=30)

    fake_model.add(_call("ledger_post", ref="R-6001", amount=130), _call("builtin_node_finish", output="R-6001 booked"))
    took = caller.run(b, "stall", "stall-2", "Is it booked?")
    assert took["status"] == 200, took
    settled = _custom(took, "skillc.write_settled")
    assert [(s["evidence"], s["status"], s["via"]) for s in settled] == [("e1", "FAILED", "verify"),
                                                                        ("e2", "SUCCESS", "call")], took
    assert invocations(records, "ledger_post") == [{"amount": 130, "ref": "R-6001"}]
    os.kill(a.proc.pid, signal.SIGCONT)
    sender.join(60)
    stalled = result["run"]
    end = stalled["events"][-1]
    assert end["type"] == "RUN_ERROR" and end["code"] == "SESSION_BUSY", end
    assert invocations(records, "ledger_post") == [{"amount": 130, "ref": "R-6001"}]  # A sent nothing
    assert invocations(records, "ledger_find") == [{"ref": "R-6001"}]
