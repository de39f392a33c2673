"""The run registry: a finished run is found again after it left memory (a restart), by a file
named for its id's hash; following a finished run yields its events in one batch."""
from __future__ import annotations

import asyncio
from pathlib import Path

from skillc.runtime.server.runs import RunLog, RunRegistry, sse_frames


def test_a_finished_run_outlives_memory(tmp_path: Path) -> None:
    async def go() -> None:
        first = RunRegistry(limit=1, root=tmp_path)
        a = RunLog(run_id="../../etc/passwd", thread_id="t1", owner="9:7")
        first.add(a)
        a.append('{"type":"RUN_STARTED"}')
        a.append('{"type":"RUN_FINISHED"}')
        a.close()
        first.finished(a)
        first.add(RunLog(run_id="b", thread_id="t2", owner="9:7"))
        assert sorted(p.name for p in tmp_path.iterdir())[0].endswith(".json")  # no path from the id
        again = RunRegistry(limit=1, root=tmp_path).get("../../etc/passwd")  # a new process
        assert again is not None and again.done and (again.thread_id, again.owner) == ("t1", "9:7")
        batches = [b async for b in again.follow(1)]
        assert batches == [(1, ['{"type":"RUN_FINISHED"}'])]
        assert sse_frames(1, batches[0][1]) == 'id: 1\ndata: {"type":"RUN_FINISHED"}\n\n'
        assert first.get("nope") is None and RunRegistry().get("b") is None
        quiet = RunLog(run_id="q", thread_id="t3", owner="9:7")  # nothing happens: keep-alives
        stream = quiet.follow(0, idle=0.01)
        assert await stream.__anext__() == (0, []) and sse_frames(0, []) == ": keep-alive\n\n"
        quiet.append("{}")
        assert await stream.__anext__() == (0, ["{}"])
        await stream.aclose()

    asyncio.run(go())


def test_a_record_is_the_events_as_sent_and_an_older_record_still_reads(tmp_path: Path) -> None:
    import json

    registry = RunRegistry(root=tmp_path)
    run = RunLog(run_id="r1", thread_id="t1", owner="9:7", events=['{"type":"RUN_STARTED","x":"a\\nb"}',
                                                                  '{"type":"RUN_FINISHED"}'], done=True)
    registry.finished(run)
    lines = registry._file("r1").read_text(encoding="utf-8").splitlines()
    assert lines[1:] == run.events  # each event's text as it was sent, not escaped into a string
    again = RunRegistry(root=tmp_path).get("r1")
    assert again is not None and again.events == run.events and again.owner == "9:7"
    old = {"run_id": "r0", "thread_id": "t0", "owner": "9:7", "events": ['{"type":"RUN_FINISHED"}']}
    registry._file("r0").write_text(json.dumps(old), encoding="utf-8")  # one document, as written before
    earlier = RunRegistry(root=tmp_path).get("r0")
    assert earlier is not None and earlier.events == old["events"] and earlier.thread_id == "t0"


def test_a_record_that_does_not_read_is_no_record(tmp_path: Path) -> None:
    """The lookup every new runId makes: a missing file, a torn one or one that is not UTF-8 is
    no run (the run is executed), never an error."""
    registry = RunRegistry(root=tmp_path)
    assert registry.get("new") is None
    registry._file("torn").write_bytes(b'{"run_id": "to')
    registry._file("latin").write_bytes(b'{"run_id": "latin", "thread_id": "t\xe9"}\n')
    registry._file("other").write_text('{"run_id": "someone else", "thread_id": "t", "owner": "o"}\n',
                                       encoding="utf-8")
    assert [registry.get(r) for r in ("torn", "latin", "other")] == [None, None, None]
