"""kill -9 at every point of a write's lifecycle, then the same message again: exactly one
invocation of the write at a real MCP server that counts its calls in a file (issue 12).

Process one (tests/helpers/durable_proc.py, a real runtime over a stdio ledger server) books
"R-7001" and SIGKILLs itself at the named point (or, for `in-call`, is killed from outside while
the server holds the answer). Process two (this one, the same server code in-process over the same
record file) reopens the session and sends the same message, as a user whose reply never came
would. Whatever the point, the ledger saw one `ledger_post`, the entry is booked once, the user
gets an answer, and no task is left open.
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from test_crash_recovery import (  # the ledger fixtures and helpers of the first crash test
    PLATFORM,
    SERVER,
    SETTINGS,
    USER,
    _end_servers,
    _invocations,
    _rows,
    _server,
    compiled,  # noqa: F401  (a fixture)
)

from helpers.wait import wait_for
from pg_cluster import BACKENDS, query, store_target  # every test runs on SQLite and on PostgreSQL
from helpers.by_path import load_module

PROC = Path(__file__).resolve().parents[1] / "helpers" / "durable_proc.py"
POST = {"call": {"tool": "ledger_post", "args": {"ref": "R-7001", "amount": 420}}}
FINISH = {"call": {"tool": "builtin_node_finish", "args": {"output": "Booked R-7001"}}}
POINTS = ["prereg-before", "prereg-after", "in-call", "answered", "settled-after", "turn-before", "turn-after"]


def _process_one(compiled: Path, tmp: Path, kill_at: str, backend: str) -> str:
    store, records = store_target(backend, tmp), tmp / "ledger.sqlite"
    hang = kill_at == "in-call"
    job = {"compiled": str(compiled), "store": str(store), "servers": {"ledger": _server(records, hang=hang)},
           "settings": SETTINGS, "platform": PLATFORM, "session": "s1", "timeout": 120,
           "kill_at": "none" if hang else kill_at, "turns": [{"user": USER, "model": [POST, FINISH]}]}
    (tmp / "job.json").write_text(json.dumps(job), encoding="utf-8")
    with open(tmp / "proc.err", "wb") as err:
        proc = subprocess.Popen([sys.executable, str(PROC), str(tmp / "job.json")], stdout=subprocess.DEVNULL,
                                stderr=err, cwd=tmp)
    try:
        if hang:
            wait_for(lambda: bool(_invocations(records, "ledger_post")) or proc.poll() is not None,
                     "the write to reach the ledger server")
            os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=120) == -signal.SIGKILL, (tmp / "proc.err").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _end_servers(records)
    return store


async def _process_two(store_path: str, compiled: Path, records: Path) -> tuple[str, list[str]]:
    from skillc.runtime.outside.config import Settings
    from skillc.runtime.compiled.loader import load_compiled
    from skillc.runtime.mcp.gateway import InProcessServer, McpGateway
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.session import Runtime
    from skillc.runtime.store import open_store

    ledger = load_module(SERVER, "skillc_test_ledger_server_durable")
    server = InProcessServer(ledger.build_server(str(records), hang=False), reports_invocations=False)
    model = ScriptedModel()
    store = open_store(store_path)
    try:
        async with McpGateway({"ledger": server}, timeout=30) as gw:
            runtime = Runtime(load_compiled(compiled), gw, model, store, Settings.from_mapping(SETTINGS), seed=7)
            session = await runtime.open_session(PLATFORM, session_id="s1")
            model.load_turn([POST, FINISH])
            reply = await session.send(USER)
            assert session.pending() is None
            return reply.text, [t.id for t in store.open_tasks("s1")]
    finally:
        store.close()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kill_at", POINTS)
def test_kill_at_every_point_then_the_same_message_writes_once(compiled: Path, tmp_path: Path,  # noqa: F811
                                                               kill_at: str, backend: str) -> None:
    records = tmp_path / "ledger.sqlite"
    try:
        store = _process_one(compiled, tmp_path, kill_at, backend)
        before = _invocations(records, "ledger_post")
        assert len(before) == (0 if kill_at == "prereg-before" or kill_at == "prereg-after" else 1)
        text, still_open = asyncio.run(_process_two(store, compiled, records))
    finally:
        _end_servers(records)
    assert _invocations(records, "ledger_post") == [{"ref": "R-7001", "amount": 420}]
    assert _rows(records, "SELECT ref, amount FROM entry") == [("R-7001", 420)]
    assert "Booked R-7001" in text
    assert still_open == []
    assert query(store, "SELECT * FROM leases WHERE holder <> ''") == []  # the turn gave its lease back
    statuses = query(store, "SELECT status FROM evidence WHERE session = 's1' AND doc LIKE '%ledger_post%'")
    assert ("SUCCESS",) in statuses and ("STARTED",) not in statuses


def _race(compiled: Path, tmp: Path, turns: list[dict[str, Any]], before: list[dict[str, Any]],
          settings: dict[str, Any] | None = None, *, store: str) -> list[list[dict[str, Any]]]:
    """Two runtime processes on one session play `turns` at the same moment (after `before` was
    played by a first process). Returns each process's printed outcomes."""
    import time

    records = tmp / "ledger.sqlite"
    # The record file made (WAL, tables) before two ledger servers start on it at once: turning a new
    # file to WAL can fail at once with "database is locked" (no busy wait), and a process whose
    # server did not start plays its turn without the tool (seen about once in three full runs).
    load_module(SERVER, "skillc_test_ledger_server_race").open_db(str(records)).close()
    base = {"compiled": str(compiled), "store": str(store), "servers": {"ledger": _server(records, hang=False)},
            "settings": settings or {}, "platform": PLATFORM, "session": "s1", "timeout": 120}
    if before:
        (tmp / "before.json").write_text(json.dumps(dict(base, turns=before)), encoding="utf-8")
        subprocess.run([sys.executable, str(PROC), str(tmp / "before.json")], check=True, capture_output=True,
                       cwd=tmp, timeout=300)
    start = time.time() + 8.0  # both processes are up (MCP server started) well before
    procs = []
    for n in (1, 2):
        (tmp / f"race{n}.json").write_text(json.dumps(dict(base, turns=turns, start_at=start)), encoding="utf-8")
        procs.append(subprocess.Popen([sys.executable, str(PROC), str(tmp / f"race{n}.json")], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, cwd=tmp, text=True))
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-2000:]
        outs.append([json.loads(line) for line in out.splitlines() if line.startswith("{")])
    _end_servers(records)
    return outs


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_processes_race_the_same_confirm(compiled: Path, tmp_path: Path, backend: str) -> None:  # noqa: F811
    approve = {"call": {"tool": "builtin_node_approval", "args": {"summary": "Book R-7001", "toolName": "ledger_post"}}}
    outs = _race(compiled, tmp_path, [{"answer": {"decision": "CONFIRM"}, "model": [FINISH]}],
                 [{"user": USER, "model": [POST, approve]}], store=store_target(backend, tmp_path))
    results = [o[0] for o in outs]
    records = tmp_path / "ledger.sqlite"
    assert _invocations(records, "ledger_post") == [{"ref": "R-7001", "amount": 420}]  # one write
    # one confirmed it; the other was refused while it ran, or given the same answer after
    answered = [r for r in results if "reply" in r]
    assert answered and all("Booked R-7001" in r["reply"] for r in answered), results
    assert all(r.get("error") in (None, "SESSION_BUSY") for r in results), results


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_processes_race_the_same_new_message(compiled: Path, tmp_path: Path, backend: str) -> None:  # noqa: F811
    turn = {"user": USER, "id": "client-msg-1", "model": [POST, FINISH]}
    store = store_target(backend, tmp_path)
    outs = _race(compiled, tmp_path, [turn], [], SETTINGS, store=store)
    results = [o[0] for o in outs]
    records = tmp_path / "ledger.sqlite"
    assert _invocations(records, "ledger_post") == [{"ref": "R-7001", "amount": 420}], results
    assert any("Booked R-7001" in r.get("reply", "") for r in results), results
    assert all(r.get("error") in (None, "SESSION_BUSY") for r in results), results
    # nothing lost or overwritten: one task, its evidence, the session's counters agree
    assert query(store, "SELECT id, state FROM tasks WHERE session = 's1'") == [("t1", "DONE")]
    assert query(store, "SELECT id FROM evidence WHERE session = 's1' ORDER BY seq") == [("e1",)]
