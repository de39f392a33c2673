"""Scale-out (issue 15): real `skillc serve` processes sharing one PostgreSQL database.

Every worker is its own process (tests/helpers/serve_workers.py) with its own ledger MCP server
process; all ledger servers record each `tools/call` in one file, so a write is counted at the tool
whichever worker sent it. The model is one fake OpenAI-compatible server (canned answers in order).
Writes of `ledger_post` need the user's approval here (no bypass), which gives every test a
stopping point between two workers.

- a client alternating between two workers continues one session (ask on one, approve on the other);
- both workers racing the same approval → one write;
- a signed request replayed to the other worker → refused (nonces live in the database);
- a worker SIGKILLed while its write is at the tool → the other worker reopens the session at its
  next turn and settles the uncertain write through the contract's `verify`: one invocation.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.serve_workers import (
    LEDGER_STUDIO,
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
from pg_cluster import require_cluster


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def _ask_approval(ref: str, amount: int) -> list[dict[str, Any]]:
    """The model's steps up to the approval question for booking `amount` under `ref`."""
    return [_call("ledger_post", ref=ref, amount=amount),
            _call("builtin_node_approval", summary=f"Book {amount} under {ref}", toolName="ledger_post")]


def _confirm(interrupt: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"interruptId": interrupt["id"], "status": "resolved",
             "payload": {"decision": "CONFIRM", "digest": interrupt["metadata"]["digest"]}}]


def _interrupt(run: dict[str, Any]) -> dict[str, Any]:
    found = outcome(run)
    assert run["status"] == 200 and found.get("type") == "interrupt", (run["status"], run["error"], found)
    return found["interrupts"][0]


def _custom(run: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [e["value"] for e in run["events"] if e["type"] == "CUSTOM" and e.get("name") == name]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ledger studio, compiled once."""
    from skillc.compiler.build import compile_studio

    out = tmp_path_factory.mktemp("scale") / "compiled"
    result = compile_studio(LEDGER_STUDIO, out)
    assert not result.rejected, result.rejected
    return out


@pytest.fixture(scope="module")
def cluster(pytestconfig: pytest.Config) -> Any:
    """The test session's PostgreSQL cluster (skipped with the reason when PostgreSQL is absent)."""
    return require_cluster(pytestconfig)


@pytest.fixture(scope="module")
def fake_model() -> Iterator[Any]:
    """One fake model server for every worker."""
    from skillc.model_stub import FakeOpenAIServer

    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture(scope="module")
def farm(compiled: Path, cluster: Any, fake_model: Any,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Two workers on one new database; a third (whose ledger server hangs on writes) is started by
    the test that kills it."""
    tmp = tmp_path_factory.mktemp("farm")
    url = cluster.new_database("scale")
    records = tmp / "ledger.sqlite"
    configs = [write_config(tmp / f"w{i}", model_url=fake_model.url, store=url, records=records, confirm_bypass=False)
               for i in range(2)]
    workers = start_workers(compiled, configs)
    farm = {"tmp": tmp, "url": url, "records": records, "workers": workers, "caller": Caller()}
    try:
        yield farm
    finally:
        farm["caller"].close()
        for w in farm["workers"]:
            w.stop()
        end_ledger_servers(records)


def test_a_client_alternating_between_two_workers_continues_one_session(farm: dict[str, Any],
                                                                        fake_model: Any) -> None:
    """Asked on worker 0, approved on worker 1, a second task on worker 0 again: one session whose
    turns, task numbers and evidence ids continue across workers."""
    a, b = farm["workers"]
    caller, records = farm["caller"], farm["records"]
    fake_model.add(*_ask_approval("R-1001", 420))
    asked = caller.run(a, "alt", "alt-1", "Book 420 under reference R-1001")
    interrupt = _interrupt(asked)
    assert interrupt["metadata"]["kind"] == "APPROVAL" and interrupt["metadata"]["task"] == "t1"
    assert invocations(records, "ledger_post") == []

    fake_model.add(_call("builtin_node_finish", output="R-1001 is booked"))
    done = caller.run(b, "alt", "alt-2", resume=_confirm(interrupt))
    assert outcome(done) == {"type": "success"}, done
    assert reply_text(done) == "R-1001 is booked"
    settled = _custom(done, "skillc.write_settled")
    assert [(s["evidence"], s["status"]) for s in settled] == [("e1", "SUCCESS")]

    fake_model.add(*_ask_approval("R-1002", 530))
    again = caller.run(a, "alt", "alt-3", "Book 530 under reference R-1002")
    second = _interrupt(again)
    assert second["metadata"]["task"] == "t2"  # worker 0 saw worker 1's turn: no t1 reused
    fake_model.add(_call("builtin_node_finish", output="R-1002 is booked"))
    finished = caller.run(b, "alt", "alt-4", resume=_confirm(second))
    assert [s["evidence"] for s in _custom(finished, "skillc.write_settled")] == ["e2"]
    assert invocations(records, "ledger_post") == [{"amount": 420, "ref": "R-1001"}, {"amount": 530, "ref": "R-1002"}]


def test_two_workers_racing_the_same_approval_make_one_write(farm: dict[str, Any], fake_model: Any) -> None:
    """The same CONFIRM sent to both workers at once: one write at the tool; the other run is
    refused as busy or answered with the same outcome, never a second call."""
    a, b = farm["workers"]
    caller, records = farm["caller"], farm["records"]
    fake_model.add(*_ask_approval("R-2001", 640))
    interrupt = _interrupt(caller.run(a, "race", "race-1", "Book 640 under reference R-2001"))
    fake_model.add(_call("builtin_node_finish", output="R-2001 is booked"))
    barrier = threading.Barrier(2)
    runs: list[Any] = [None, None]

    def send(i: int, worker: Worker) -> None:
        barrier.wait()
        runs[i] = caller_i[i].run(worker, "race", f"race-2-{i}", resume=_confirm(interrupt))

    caller_i = [Caller(), Caller()]
    try:
        threads = [threading.Thread(target=send, args=(i, w)) for i, w in enumerate((a, b))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for c in caller_i:
            c.close()
    assert invocations(records, "ledger_post").count({"amount": 640, "ref": "R-2001"}) == 1
    settled = [s for run in runs if run["status"] == 200 for s in _custom(run, "skillc.write_settled")]
    assert [(s["evidence"], s["status"]) for s in settled] == [("e1", "SUCCESS")]
    for run in runs:  # the loser: busy (409, or RUN_ERROR from the worker that lost the lease
        # race), stale (the approval was already answered: the run's RUN_ERROR), or the same answer again
        if run["status"] == 409:
            assert run["error"]["code"] == "SESSION_BUSY", run["error"]
            continue
        assert run["status"] == 200, run
        end = run["events"][-1]
        assert end["type"] == "RUN_FINISHED" or (end["type"] == "RUN_ERROR"
                                                 and end["code"] in ("SESSION_BUSY", "INTERRUPT_STALE")), end
        if end["type"] == "RUN_FINISHED":
            assert outcome(run) == {"type": "success"} and reply_text(run) == "R-2001 is booked"


def test_a_signed_request_replayed_to_another_worker_is_refused(farm: dict[str, Any]) -> None:
    # The nonce is recorded in the shared database, not in the worker that first saw it.
    import httpx

    from helpers.serve_workers import ALICE, SECRET
    from skillc.runtime.server.auth import sign_request

    first, second = farm["workers"]
    headers = sign_request(SECRET, "GET", "/api/sessions", b"", ALICE)
    assert httpx.get(first.url + "/api/sessions", headers=headers, timeout=30).status_code == 200
    replayed = httpx.get(second.url + "/api/sessions", headers=headers, timeout=30)
    assert replayed.status_code == 401 and replayed.json()["error"]["code"] == "AUTH_REPLAYED"
    again = httpx.get(first.url + "/api/sessions", headers=headers, timeout=30)
    assert again.status_code == 401 and again.json()["error"]["code"] == "AUTH_REPLAYED"


def test_a_worker_killed_mid_write_is_settled_by_the_other_through_verify(farm: dict[str, Any], compiled: Path,
                                                                         fake_model: Any) -> None:
    """Worker 2's ledger server books the entry and never answers; worker 2 is SIGKILLed while
    waiting. The next turn, on worker 1, reopens the node, settles the write through `ledger_find`
    (via verify), finishes the task: the entry was posted exactly once."""
    tmp, records, caller = farm["tmp"], farm["records"], farm["caller"]
    hang_config = write_config(tmp / "w2", model_url=fake_model.url, store=farm["url"], records=records,
                               hang=True, confirm_bypass=False)
    (doomed,) = start_workers(compiled, [hang_config])
    farm["workers"].append(doomed)
    fake_model.add(*_ask_approval("R-3001", 750))
    interrupt = _interrupt(caller.run(doomed, "kill", "kill-1", "Book 750 under reference R-3001"))

    result: dict[str, Any] = {}

    def confirm() -> None:
        try:
            result["run"] = Caller().run(doomed, "kill", "kill-2", resume=_confirm(interrupt))
        except Exception as exc:  # the worker dies under the stream: that is the point
            result["error"] = exc

    sender = threading.Thread(target=confirm)
    sender.start()
    wait_for(lambda: {"amount": 750, "ref": "R-3001"} in invocations(records, "ledger_post"),
             "the write to reach the ledger server")
    doomed.kill()  # SIGKILL to its process group: its hung ledger server goes with it
    sender.join(60)

    _, other = farm["workers"][:2]
    fake_model.add(_call("builtin_node_finish", output="R-3001 is booked"))
    later = caller.run(other, "kill", "kill-3", "Is it booked?")
    assert later["status"] == 200, later
    settled = _custom(later, "skillc.write_settled")
    assert [(s["evidence"], s["status"], s["via"]) for s in settled] == [("e1", "SUCCESS", "verify")]
    assert outcome(later) == {"type": "success"} and "R-3001 is booked" in reply_text(later)
    assert invocations(records, "ledger_post").count({"amount": 750, "ref": "R-3001"}) == 1
    assert invocations(records, "ledger_find") == [{"ref": "R-3001"}]
