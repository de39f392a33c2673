"""A restarted `skillc serve` numbers its trace on from the per-session files it finds: a session's
file keeps a rising `seq` across the restart, so `?after=` / `Last-Event-ID` reads see the new
events and `skillc audit verify` finds no reordering."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from serve_harness import ALICE, SECRET, Client, ServerThread, write_config

from skillc.runtime.telemetry.audit import verify


def _follow_up(model: Any) -> None:
    model.add({"answer": {"agent": "editor"}},
              {"tool_calls": [{"name": "builtin_node_follow_up",
                               "arguments": {"question": "Which title?", "expectedFields": ["title"]}}]})


def test_a_restarted_service_numbers_each_session_file_on(compiled: Path, model: Any, tmp_path: Path) -> None:
    from skillc.runtime.server import create_app

    config = write_config(tmp_path, str(compiled), model.url)
    seqs: list[list[int]] = []
    for attempt in range(2):  # the same service, started twice over one store and one trace dir
        with ServerThread(create_app(config_path=config)) as server:
            client = Client(server.url, SECRET, ALICE)
            try:
                if attempt == 0:
                    _follow_up(model)
                    first = client.run("restart", "restart-1", "Create an article please")
                    assert first.status == 200 and first.interrupt["message"] == "Which title?"
                else:
                    model.add({"tool_calls": [{"name": "builtin_node_cancel", "arguments": {"reason": "not now"}}]})
                    client.run("restart", "restart-2", "never mind")
                    after = seqs[0][-1]
                    newer = client.request("GET", f"/api/sessions/restart/trace?after={after}")
                    assert newer.status_code == 200 and newer.text.strip(), "events after the restart are served"
                seqs.append([e["seq"] for e in client.trace("restart")])
            finally:
                client.close()
    before, after = seqs
    assert after[:len(before)] == before and len(after) > len(before)
    assert after == sorted(after) and len(set(after)) == len(after), "seq rises across the restart"
    files = list((tmp_path).rglob("restart.jsonl"))
    assert len(files) == 1
    events = [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines()]
    verdict = verify(enumerate(events, 1))
    assert verdict.problem is None, verdict.problem
