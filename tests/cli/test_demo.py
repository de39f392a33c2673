"""`skillc demo` runs end to end in a subprocess: exit 0, a readable transcript, a complete trace."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_demo_runs_and_writes_its_trace(tmp_path: Path) -> None:
    trace = tmp_path / "demo.jsonl"
    done = subprocess.run([sys.executable, "-m", "skillc", "demo", "--trace", str(trace)], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "Creating the article" in out  # a tool label shown as progress
    assert "APPROVAL" in out and "Title: Spring launch" in out  # the approval question with its summary
    assert "PARAM_PROVENANCE_REJECTED" in out  # the fabricated id refused
    assert "settled SUCCESS via verify" in out  # the uncertain write verified
    assert f"trace written to {trace}" in out
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds.count("turn.reply") == 3 and "error" not in kinds
    invoked = [e for e in events if e["type"] == "mcp.invoked"]
    assert [e["tool"] for e in invoked].count("cms_article_create") == 1
    assert [e["tool"] for e in invoked].count("cms_tag_add") == 1  # verified, never sent twice
    settled = [e for e in events if e["type"] == "write.settled"]
    assert {(e["tool"], e["via"], e["status"]) for e in settled} == {
        ("cms_article_create", "call", "SUCCESS"), ("cms_tag_add", "verify", "SUCCESS")}
    finished = [e["state"] for e in events if e["type"] == "task.finished"]
    assert finished == ["DONE", "DONE"]
