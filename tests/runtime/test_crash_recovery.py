"""SIGKILL a real runtime process between a write's pre-registration and the tool's answer.

Process one (tests/helpers/runtime_proc.py) runs the ledger skill over a real stdio MCP server
whose `ledger_post` books the entry, records the invocation and never answers. Once the server's
record shows the invocation, the runtime is killed with SIGKILL. The store must then hold the
write as `STARTED` (committed before the call, §13 / §14; docs/interpretations.md: Evidence
registration); a new Runtime in this process (the same server code in-process, over the same
record file) reopens the session and sees `UNKNOWN_PRE_CALL` ("Restart"); the next turn settles
the write through the contract's `verify` tool (`write.settled via verify`, "Uncertain writes"),
and the server's own record shows exactly one invocation of the write.
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers.integration.events import expect_in_order, none_match, of_turn
from helpers.wait import wait_for
from helpers.by_path import load_module

HELPERS = Path(__file__).resolve().parents[1] / "helpers"
STUDIO = HELPERS / "integration" / "studios" / "ledger"
SERVER = HELPERS / "integration" / "ledger_server.py"
RUNTIME_PROC = HELPERS / "runtime_proc.py"
DEADLINE = 60.0  # seconds: a bound on polling, never a pause; a healthy run needs about 2 s
SETTINGS = {"state.write-confirm-bypass-tools": ["ledger_post"]}
PLATFORM = {"userId": 7, "memberId": 70, "name": "alice", "organId": 9}
USER = "Book 420 under reference R-7001"


def _rows(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    """Rows of a query on a SQLite file another process may be writing; [] before it exists."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError:  # tables not created yet
        return []


def _invocations(records: Path, tool: str) -> list[dict[str, Any]]:
    return [json.loads(a) for (a,) in _rows(records, "SELECT args FROM invocation WHERE tool = ? ORDER BY n", tool)]


def _end_servers(records: Path) -> None:
    """Kill the ledger servers this test caused to start (by pid, checking it is still ours)."""
    for (pid,) in _rows(records, "SELECT pid FROM process"):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if str(SERVER).encode() in cmdline:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _server(records: Path, *, hang: bool) -> dict[str, Any]:
    env = {"LEDGER_DB": str(records), **({"LEDGER_HANG": "1"} if hang else {})}
    return {"command": sys.executable, "args": [str(SERVER)], "env": env}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ledger studio compiled once for the module."""
    from skillc.compiler.build import compile_studio

    out = tmp_path_factory.mktemp("ledger") / "compiled"
    result = compile_studio(STUDIO, out)
    assert not result.rejected, result.rejected
    return out


def _kill_runtime_mid_write(compiled: Path, tmp: Path) -> tuple[Path, Path, Path]:
    """Process one: run the write turn, SIGKILL it once the server has the call. Returns
    (store, server record, process-one trace)."""
    store, records, trace = tmp / "store.sqlite", tmp / "ledger.sqlite", tmp / "trace1.jsonl"
    job = {
        "compiled": str(compiled), "store": str(store), "trace": str(trace),
        "servers": {"ledger": _server(records, hang=True)}, "settings": SETTINGS, "platform": PLATFORM,
        "session": "s1", "timeout": 120,
        "turns": [{"user": USER, "model": [{"call": {"tool": "ledger_post", "args": {"ref": "R-7001", "amount": 420}}}]}],
    }
    (tmp / "job.json").write_text(json.dumps(job), encoding="utf-8")
    with open(tmp / "proc.err", "wb") as err:
        proc = subprocess.Popen([sys.executable, str(RUNTIME_PROC), str(tmp / "job.json")],
                                stdout=subprocess.DEVNULL, stderr=err, cwd=tmp)
    try:
        wait_for(lambda: bool(_invocations(records, "ledger_post")) or proc.poll() is not None,
                 "the write to reach the ledger server")
        assert proc.poll() is None, "the runtime process ended on its own:\n" + (tmp / "proc.err").read_text()
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=DEADLINE) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return store, records, trace


def test_sigkill_mid_write_reopens_unknown_and_verify_settles_once(compiled: Path, tmp_path: Path) -> None:
    records = tmp_path / "ledger.sqlite"
    try:
        store_path, records, trace1 = _kill_runtime_mid_write(compiled, tmp_path)

        # Killed between pre-registration and the answer: the write is on disk as STARTED, and
        # the tool was reached once (the entry is booked, the runtime never heard back).
        assert _rows(store_path, "SELECT id, status FROM evidence WHERE session = 's1'") == [("e1", "STARTED")]
        assert _invocations(records, "ledger_post") == [{"ref": "R-7001", "amount": 420}]
        assert _rows(records, "SELECT ref, amount FROM entry") == [("R-7001", 420)]
        events1 = [json.loads(line) for line in trace1.read_text(encoding="utf-8").splitlines()]
        expect_in_order(events1, [{"type": "node.started", "node": "n1"},
                                  {"type": "mcp.invoked", "tool": "ledger_post", "args": {"ref": "R-7001", "amount": 420}}])
        none_match(events1, {"type": "tool.call", "tool": "ledger_post"})  # the answer never came
        _end_servers(records)  # the hung server of process one, orphaned by the kill

        events, unknown_status, reopened_status = asyncio.run(_reopen_and_settle(compiled, store_path, records))
    finally:
        _end_servers(records)

    assert unknown_status == "UNKNOWN_PRE_CALL"
    assert reopened_status == "UNKNOWN_PRE_CALL"  # the conversion is committed by open_session
    turn = of_turn(events, 2)
    expect_in_order(turn, [
        {"type": "turn.started", "message": "Is it booked?"},
        {"type": "mcp.invoked", "tool": "ledger_find", "args": {"ref": "R-7001"}},
        {"type": "write.settled", "node": "n1", "evidence": "e1", "tool": "ledger_post", "status": "SUCCESS",
         "via": "verify"},
        {"type": "tool.call", "tool": "builtin_node_finish", "ok": True},
        {"type": "node.finished", "node": "n1", "state": "DONE"},
        {"type": "task.finished", "task": "t1", "state": "DONE"},
        {"type": "turn.reply", "suspended": False},
    ])
    none_match(turn, {"type": "mcp.invoked", "tool": "ledger_post"})
    none_match(turn, {"type": "task.planned"})  # the reopened node continues; no new task
    assert len([e for e in turn if e["type"] == "write.settled"]) == 1
    # Exactly one invocation of the write at the tool, over both processes.
    assert _invocations(records, "ledger_post") == [{"ref": "R-7001", "amount": 420}]
    assert _invocations(records, "ledger_find") == [{"ref": "R-7001"}]
    assert _rows(records, "SELECT ref, amount FROM entry") == [("R-7001", 420)]
    assert _rows(store_path, "SELECT id, status FROM evidence WHERE session = 's1'") == [("e1", "SUCCESS")]


async def _reopen_and_settle(compiled: Path, store_path: Path,
                             records: Path) -> tuple[list[dict[str, Any]], str, str]:
    """Process two (this one): reopen the store, check the write, play the next turn.
    Returns (trace events, the evidence status after reopening, the same status read back from disk)."""
    from skillc.runtime.outside.config import Settings
    from skillc.runtime.session import Runtime
    from skillc.runtime.compiled.loader import load_compiled
    from skillc.runtime.mcp.gateway import InProcessServer, McpGateway
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.store import Store
    from skillc.runtime.telemetry.trace import TraceWriter

    trace = TraceWriter(keep=True)
    holder: dict[str, Any] = {}

    def on_invoked(tool: str, args: dict[str, Any]) -> None:
        s = holder["session"].env
        trace.emit({"type": "mcp.invoked", "tool": tool, "args": args}, session=s.id, turn=s.session.turn)

    # The same server code, in this process this time (a second stdio start would only add a
    # second's start-up); reports_invocations=False: the gateway's on_invoked reports the calls.
    ledger = load_module(SERVER, "skillc_test_ledger_server")
    server = InProcessServer(ledger.build_server(str(records), hang=False), reports_invocations=False)
    model = ScriptedModel()
    store = Store(store_path)
    try:
        async with McpGateway({"ledger": server}, timeout=30, on_invoked=on_invoked) as gw:
            runtime = Runtime(load_compiled(compiled), gw, model, store, Settings.from_mapping(SETTINGS),
                              trace=trace, seed=7)
            session = await runtime.open_session(PLATFORM, session_id="s1")
            holder["session"] = session
            unknown = session.env.evidence["e1"].status
            on_disk = store.raw("SELECT status FROM evidence WHERE session = 's1' AND id = 'e1'")[0][0]
            assert session.pending() is None  # nothing to answer: the node was RUNNING, not suspended
            model.load_turn([{"call": {"tool": "builtin_node_finish", "args": {"output": "R-7001 is booked"}}}])
            reply = await session.send("Is it booked?")
            assert not reply.suspended and "R-7001 is booked" in reply.text
    finally:
        store.close()
    return trace.events, unknown, on_disk
