"""The trace file is written in batches at stopping points, and a kill -9 loses no committed event.

A served turn wrote and flushed each of its events to the trace file one by one (issue 28: 7 % of
a served turn). Now lines wait in the writer until a stopping point: before a unit of work
commits (so the chain head the unit stores names an event already on disk), at the end of a turn,
and when a call reaches the outside world. The kill test runs a real runtime process over a real
SQLite store and SIGKILLs it right before its write is sent: every event up to the head the store
committed is in the file, whole."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.ledger import compile_ledger
from skillc.runtime.store import open_store
from skillc.runtime.telemetry.trace import FLUSH_EVERY, TraceWriter

HELPER = Path(__file__).resolve().parents[1] / "helpers" / "trace_kill_proc.py"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_events_wait_for_a_stopping_point(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    seen: list[str] = []
    writer = TraceWriter(str(path))
    writer.add_listener(lambda e: seen.append(e["type"]))
    writer.emit({"type": "turn.started", "message": "hi"}, session="s1", turn=1)
    writer.emit({"type": "node.started", "node": "n1"}, session="s1", turn=1)
    assert path.read_text(encoding="utf-8") == "" and seen == ["turn.started", "node.started"]  # listeners at once
    writer.flush()
    assert [e["type"] for e in _lines(path)] == ["turn.started", "node.started"]
    writer.emit({"type": "mcp.invoked", "tool": "ledger_post", "args": {}}, session="s1", turn=1)  # reaches the outside: at once
    assert [e["type"] for e in _lines(path)][-1] == "mcp.invoked"
    for i in range(FLUSH_EVERY):  # a long stretch without a stopping point is bounded in memory
        writer.emit({"type": "tool.call", "tool": "t", "i": i}, session="s1", turn=1)
    assert len(_lines(path)) == 3 + FLUSH_EVERY
    writer.emit({"type": "turn.reply", "text": "done"}, session="s1", turn=1)
    writer.close()  # closing writes the rest
    assert _lines(path)[-1]["type"] == "turn.reply"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_ledger(tmp_path_factory.mktemp("ledger") / "compiled")


def test_a_kill_after_a_commit_loses_no_committed_event(compiled: Path, tmp_path: Path) -> None:
    store, trace, records = tmp_path / "store.sqlite", tmp_path / "trace.jsonl", tmp_path / "ledger.sqlite"
    tests = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(HELPER), str(compiled), str(store), str(trace), str(records)],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr[-2000:]  # it died by SIGKILL, not by an error
    raw = trace.read_text(encoding="utf-8")
    assert raw.endswith("\n")  # no line cut short: lines are written whole at stopping points
    events = _lines(trace)
    db = open_store(store)
    try:
        head = db.trace_head("s1")
    finally:
        db.close()
    assert head is not None  # the pre-registration unit committed a chain head
    hashes = [e.get("hash") for e in events]
    assert head in hashes, "the event the committed unit names is not in the trace file"
    # and the events up to it are all there, numbered without a gap
    upto = events[: hashes.index(head) + 1]
    assert [e["seq"] for e in upto] == list(range(1, len(upto) + 1))
    assert {"turn.started", "node.started"} <= {e["type"] for e in upto}
