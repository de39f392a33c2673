"""The audit hash chain across a restart: a session's chain head is stored with its units of work,
so a second runtime on the same SQLite file, appending to the same trace file, continues the
session's chain where the first one stopped and `skillc audit verify` sees one unbroken chain
(issue 17's chain, issue 12's store). Real SQLite file, the ledger MCP server in-process."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from skillc.main import run as cli_run
from skillc.runtime.store import open_store
from skillc.runtime.telemetry.audit import verify
from skillc.runtime.telemetry.trace import TraceWriter, iter_events
from helpers.ledger import APPROVE, FINISH, PLATFORM, POST, SERVER, compile_ledger
from helpers.by_path import load_module


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_ledger(tmp_path_factory.mktemp("ledger") / "compiled")


async def _process(compiled: Path, tmp: Path, trace_path: Path | None, turn: Any) -> None:
    """One "process": a runtime over the store file and the trace file (appended to; None: a
    runtime whose trace nobody receives, as an embedded `Runtime` has by default), one turn."""
    from skillc.runtime.outside.config import Settings
    from skillc.runtime.compiled.loader import load_compiled
    from skillc.runtime.mcp.gateway import InProcessServer, McpGateway
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.session import Runtime

    ledger = load_module(SERVER, "skillc_test_ledger_server_audit")
    gateway = McpGateway({"ledger": InProcessServer(ledger.build_server(str(tmp / "ledger.sqlite"), hang=False),
                                                    reports_invocations=False)}, timeout=30)
    await gateway.start()
    model = ScriptedModel()
    runtime = Runtime(load_compiled(compiled), gateway, model, open_store(tmp / "store.sqlite"),
                      Settings.from_mapping({}), clock=lambda: 1_800_000_000.0, seed=7,
                      trace=TraceWriter(str(trace_path), append=True) if trace_path else TraceWriter())
    try:
        session = await runtime.open_session(PLATFORM, session_id="s1")
        await turn(session, model)
    finally:
        await runtime.aclose()  # closes the store and the trace file: the process is gone


async def _ask(session: Any, model: Any, text: str = "Book 420 under reference R-7001") -> None:
    """A booking that stops at its approval."""
    model.load_turn([POST, APPROVE])
    assert (await session.send(text)).kind == "APPROVAL"


def test_a_restarted_process_continues_the_sessions_chain(compiled: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("SKILLC_AUDIT_KEY", raising=False)
    trace = tmp_path / "trace.jsonl"

    async def confirm(session: Any, model: Any) -> None:
        model.load_turn([FINISH])
        assert "Booked R-7001" in (await session.answer({"decision": "CONFIRM"})).text

    asyncio.run(_process(compiled, tmp_path, trace, _ask))
    first = [e for _, e in iter_events(str(trace))]
    store = open_store(tmp_path / "store.sqlite")
    try:  # the head kept is the first process's last event (its turn.reply, after the last unit)
        assert first[-1]["type"] == "turn.reply" and store.trace_head("s1") == first[-1]["hash"]
    finally:
        store.close()
    asyncio.run(_process(compiled, tmp_path, trace, confirm))
    events = [e for _, e in iter_events(str(trace))]
    second = events[len(first):]
    assert second and second[0]["prev"] == first[-1]["hash"]  # continued, not restarted at the anchor
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))  # numbered on
    assert {"audit.approval", "audit.settlement"} <= {e["type"] for e in events}
    verdict = verify(iter_events(str(trace)))
    assert verdict.ok and verdict.problem is None, verdict.problem
    assert not [n for n in verdict.notes if "restarts its chain" in n], verdict.notes
    assert cli_run(["audit", "verify", "--json", str(trace)]) == 0
    assert json.loads(capsys.readouterr().out)["ok"]
    # and the chain still catches an edit of the first process's part
    lines = trace.read_text(encoding="utf-8").splitlines()
    edited = json.loads(lines[len(first) - 1])
    edited["text"] = "changed"
    lines[len(first) - 1] = json.dumps(edited)
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert verify(iter_events(str(trace))).problem.kind == "altered"  # type: ignore[union-attr]


def test_a_process_whose_trace_nobody_receives_leaves_the_chain_where_it_was(
        compiled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between two processes writing the trace file, one with no trace sink at all runs a turn of
    the same session: its events reach nobody, so it seals none and stores no head of its own; the
    third process continues the file's chain from the first one's last event, and the file
    verifies without a break or a restart (a head of events no file holds would be a dangling
    `prev`)."""
    monkeypatch.delenv("SKILLC_AUDIT_KEY", raising=False)
    trace = tmp_path / "trace.jsonl"

    async def reject(session: Any, model: Any) -> None:
        model.load_turn([FINISH])
        await session.answer({"decision": "REJECT"})

    async def again(session: Any, model: Any) -> None:
        await _ask(session, model, "Book 430 under reference R-7002")

    asyncio.run(_process(compiled, tmp_path, trace, _ask))
    first = [e for _, e in iter_events(str(trace))]
    asyncio.run(_process(compiled, tmp_path, None, reject))
    store = open_store(tmp_path / "store.sqlite")
    try:
        assert store.trace_head("s1") == first[-1]["hash"]  # the unheard turn did not move it
    finally:
        store.close()
    asyncio.run(_process(compiled, tmp_path, trace, again))
    events = [e for _, e in iter_events(str(trace))]
    assert len(events) > len(first) and events[len(first)]["prev"] == first[-1]["hash"]
    verdict = verify(iter_events(str(trace)))
    assert verdict.ok and verdict.problem is None, verdict.problem
    assert not verdict.notes, verdict.notes


def test_a_writer_seals_only_what_someone_receives() -> None:
    """No file, kept list, listener, sink or observer: the event goes out unsealed and the head
    stays; the first event someone receives is chained from the session's anchor."""
    writer = TraceWriter()
    quiet = writer.emit({"type": "turn.started", "message": "hi"}, session="s1", turn=1)
    assert "hash" not in quiet and "prev" not in quiet and writer.chain_head("s1") is None
    heard: list[dict[str, Any]] = []
    writer.add_listener(lambda ev: heard.append(dict(ev)))
    writer.emit({"type": "turn.started", "message": "again"}, session="s1", turn=2)
    writer.emit({"type": "turn.reply", "text": "ok", "suspended": False}, session="s1", turn=2)
    assert heard[0]["prev"] == writer.chain.anchor("s1")  # type: ignore[union-attr]
    assert heard[1]["prev"] == heard[0]["hash"] and writer.chain_head("s1") == heard[1]["hash"]
    assert verify(iter(enumerate(heard, 1))).ok


def test_appending_numbers_on_after_a_line_cut_short(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    writer = TraceWriter(str(path))
    for turn in (1, 2):
        writer.emit({"type": "turn.started", "message": "hi"}, session="s1", turn=turn)
    writer.close()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"seq": 3, "type": "turn.rep')  # a crash mid-line
    writer = TraceWriter(str(path), append=True)
    assert writer.emit({"type": "turn.started", "message": "again"}, session="s1", turn=3)["seq"] == 3
    writer.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 and json.loads(lines[3])["seq"] == 3  # the cut line stays on its own


def test_a_process_that_died_after_its_last_unit_leaves_a_noted_fork(compiled: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed after the turn's last unit, before its lease was given back: the store's head is the
    event before `turn.reply`. The next process continues from there; verify notes the bypassed
    tail instead of calling it an edit, and an event really moved is still caught."""
    import sqlite3

    monkeypatch.delenv("SKILLC_AUDIT_KEY", raising=False)
    trace = tmp_path / "trace.jsonl"

    async def confirm(session: Any, model: Any) -> None:
        model.load_turn([FINISH])
        await session.answer({"decision": "CONFIRM"})

    asyncio.run(_process(compiled, tmp_path, trace, _ask))
    first = [e for _, e in iter_events(str(trace))]
    with sqlite3.connect(tmp_path / "store.sqlite") as db:  # what the store holds after such a death
        db.execute("UPDATE sessions SET head = ? WHERE id = 's1'", (first[-2]["hash"],))
    asyncio.run(_process(compiled, tmp_path, trace, confirm))
    events = [e for _, e in iter_events(str(trace))]
    assert events[len(first)]["prev"] == first[-2]["hash"] and events[len(first)]["type"] == "turn.started"
    verdict = verify(iter_events(str(trace)))
    assert verdict.ok, verdict.problem
    assert any(f"continues at seq {len(first) + 1} from seq {len(first) - 1}" in n for n in verdict.notes), verdict.notes
    # a fork that is not a restart (the bypassed events open a turn of their own) stays a break
    lines = trace.read_text(encoding="utf-8").splitlines()
    events[len(first) - 1]["type"] = "turn.started"  # re-hashed: keyless, so anyone can; the fork shape is what counts
    from skillc.runtime.telemetry.audit import AuditChain

    events[len(first) - 1]["hash"] = AuditChain(None).event_hash(events[len(first) - 1])
    lines[len(first) - 1] = json.dumps(events[len(first) - 1])
    trace.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert verify(iter_events(str(trace))).problem is not None
