"""The tamper-evident trace: a real scenario's trace verifies; an altered, a removed and a
reordered event are each named by `skillc audit verify`; approvals and settlements are audit events."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.telemetry_scenario import run_async, SECRET, write_scenario

from skillc.commands import audit as audit_cmd
from skillc.main import run as cli_run
from skillc.runtime.telemetry.audit import AuditChain, verify
from skillc.runtime.telemetry.trace import TraceWriter, iter_events
from skillc.scenario.runner import run_scenario


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("audit")
    path = folder / "trace.jsonl"
    result = run_async(run_scenario(write_scenario(folder), trace_path=str(path)))
    assert result.error is None and result.crash is None and not result.problems, result
    return path


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events), encoding="utf-8")
    return path


def _verify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli_run(["audit", "verify", str(path)])
    return code, capsys.readouterr().out


def test_a_real_trace_verifies(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _verify(trace, capsys)
    assert code == 0, out
    assert "chain intact" in out


def test_altered_event_is_named(trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = _lines(trace)
    target = next(i for i, e in enumerate(events) if e["type"] == "tool.call" and e.get("error") == "APPROVAL_REQUIRED")
    events[target]["error"] = None  # hide the refusal
    code, out = _verify(_write(tmp_path / "altered.jsonl", events), capsys)
    assert code == 1
    assert f"line {target + 1}: seq {events[target]['seq']} (tool.call" in out and "ALTERED" in out


def test_removed_event_is_named(trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = _lines(trace)
    gone = next(i for i, e in enumerate(events) if e["type"] == "audit.approval")
    kept = events[:gone] + events[gone + 1:]
    code, out = _verify(_write(tmp_path / "removed.jsonl", kept), capsys)
    assert code == 1
    assert f"seq {events[gone + 1]['seq']}" in out and "REMOVED" in out
    assert f"after seq {events[gone - 1]['seq']}" in out


def test_reordered_events_are_named(trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = _lines(trace)
    i = next(i for i, e in enumerate(events) if e["type"] == "write.settled")
    swapped = events[:i - 1] + [events[i], events[i - 1]] + events[i + 1:]
    code, out = _verify(_write(tmp_path / "reordered.jsonl", swapped), capsys)
    assert code == 1
    assert f"seq {events[i]['seq']}" in out and "REORDERED" in out and f"predecessor, seq {events[i - 1]['seq']}" in out


def test_rehashed_edit_breaks_the_next_link(trace: Path, tmp_path: Path) -> None:
    """An editor who recomputes the edited event's own hash (no key needed) still breaks the chain."""
    events = _lines(trace)
    chain = AuditChain(None)
    events[3]["turn"] = 99
    events[3]["hash"] = chain.event_hash(events[3])
    verdict = verify(iter_events(str(_write(tmp_path / "rehashed.jsonl", events))))
    assert verdict.problem is not None and verdict.problem.seq == events[4]["seq"]
    assert verdict.problem.kind == "removed"


def test_keyed_chain_needs_its_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    writer = TraceWriter(str(tmp_path / "k.jsonl"), key=b"audit-key")
    for turn in (1, 2):
        writer.emit({"type": "turn.started", "message": "hi"}, session="s9", turn=turn)
        writer.emit({"type": "turn.reply", "text": "ok", "suspended": False}, session="s9", turn=turn)
    writer.close()
    monkeypatch.delenv("SKILLC_AUDIT_KEY", raising=False)
    code, out = _verify(tmp_path / "k.jsonl", capsys)
    assert code == 1 and "line 1:" in out and "another audit key" in out
    monkeypatch.setenv("SKILLC_AUDIT_KEY", "audit-key")
    code, out = _verify(tmp_path / "k.jsonl", capsys)
    assert code == 0 and "keyed" in out


def test_unreadable_trace_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.jsonl").write_text("{not json\n", encoding="utf-8")
    assert cli_run(["audit", "verify", str(tmp_path / "bad.jsonl")]) == 2
    assert cli_run(["audit", "verify", str(tmp_path / "missing.jsonl")]) == 2
    assert audit_cmd.HELP


def test_approvals_and_settlements_are_audit_events(trace: Path) -> None:
    events = _lines(trace)
    approvals = [e for e in events if e["type"] == "audit.approval"]
    assert [a["decision"] for a in approvals] == ["REQUESTED", "CONFIRM"]
    assert approvals[0]["approval"] == approvals[1]["approval"]  # the answer names the request
    assert approvals[1]["who"] == {"actor": "user", "userId": 7, "memberId": 70, "organId": 9}
    assert approvals[0]["what"]["tool"] == "cms_article_create"
    assert approvals[0]["what"]["args_digest"] == approvals[1]["what"]["args_digest"]
    assert approvals[1]["at"].endswith("Z")
    settlement = next(e for e in events if e["type"] == "audit.settlement")
    assert settlement["via"] == "verify" and settlement["status"] == "SUCCESS"
    assert settlement["what"]["args_digest"] == approvals[1]["what"]["args_digest"]  # what was approved ran
    assert len(settlement["what"]["idempotency_key_digest"]) == 64
    # each follows the event it explains
    i = events.index(settlement)
    assert events[i - 1]["type"] == "write.settled"
    for e in approvals + [settlement]:
        assert SECRET not in json.dumps(e)


def test_streaming_writer_keeps_nothing() -> None:
    writer = TraceWriter()
    seen: list[str] = []
    writer.add_listener(lambda ev: seen.append(ev["type"]))
    writer.emit({"type": "turn.started", "message": "hi"}, session="s1", turn=1)
    assert seen == ["turn.started"]
    with pytest.raises(RuntimeError, match="keep=True"):
        _ = writer.events


def test_json_verdict_and_a_restarted_chain(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A second writer (a restarted process) continues a session from its anchor: noted, not a
    break; `--json` reports the verdict for tools."""
    monkeypatch.delenv("SKILLC_AUDIT_KEY", raising=False)
    path = tmp_path / "restart.jsonl"
    lines = []
    for _ in range(2):  # two processes, one after the other, appending to one log
        writer = TraceWriter(str(tmp_path / "part.jsonl"))
        writer.emit({"type": "turn.started", "message": "hi"}, session="s1", turn=1)
        writer.emit({"type": "turn.reply", "text": "ok", "suspended": False}, session="s1", turn=1)
        writer.close()
        lines.append((tmp_path / "part.jsonl").read_text(encoding="utf-8"))
    # seq restarts too in a new process: renumber as one log would (seq is hashed, so re-seal)
    events = [json.loads(line) for text in lines for line in text.splitlines()]
    chain = AuditChain(None)
    for seq, event in enumerate(events, 1):
        event["seq"] = seq
        if seq == 3:
            chain.heads.clear()  # the new process knows nothing of the old chain
        event.pop("hash")
        event.pop("prev")
        chain.seal(event)
    _write(path, events)
    assert cli_run(["audit", "verify", "--json", str(path)]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["ok"] and verdict["problem"] is None and verdict["events"] == 4
    assert any("restarts its chain at seq 3" in note for note in verdict["notes"])
    events[1]["text"] = "changed"
    _write(path, events)
    assert cli_run(["audit", "verify", "--json", str(path)]) == 1
    problem = json.loads(capsys.readouterr().out)["problem"]
    assert problem == {"kind": "altered", "line": 2, "seq": 2, "type": "turn.reply", "session": "s1",
                       "message": "its content does not match its hash"}
