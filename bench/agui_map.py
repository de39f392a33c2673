"""Benchmark of the served path's AG-UI mapping (not a test): CPU time to turn one turn's trace
events into encoded AG-UI events, without HTTP, the store or the chain.

    python bench/agui_map.py [--turns 2000]

The turn is the shape of a served write with two tool calls (a plan, a step, a progress label,
two tool calls, a settled write, the step's end, the task's end, the reply and final snapshot):
21 AG-UI events. Best of 7 rounds in this process's CPU time, so other load on the machine does
not count. Run it against an earlier revision with `bench/compare.py --base <rev> agui_map.py`
(when that revision has the file) or side by side with `git stash`.
"""
from __future__ import annotations

import argparse
import time
from types import SimpleNamespace
from typing import Any

from skillc.runtime.server.mapping import RunMapper
from skillc.runtime.server.runs import RunLog

STATE = {"session": "s1", "turn": 3, "active_task": {"id": "t1", "state": "RUNNING", "nodes": {
    "n1": {"state": "DONE", "skill": "cms.article.lifecycle", "outputs": {"articleId": 17}}}},
    "entities": [{"type": "space", "id": 3, "name": "Docs"}], "pending": None}
EVENTS: list[dict[str, Any]] = [
    {"type": "task.planned", "session": "s1", "node": "n1"},
    {"type": "node.started", "session": "s1", "node": "n1", "skill": "cms.article.lifecycle", "kind": "SKILL"},
    {"type": "tool.call", "session": "s1", "node": "n1", "tool": "cms_space_list", "args": {"organId": 9}, "ok": True,
     "status": "SUCCESS", "evidence": "e1", "business_ok": True},
    {"type": "tool.call", "session": "s1", "node": "n1", "tool": "cms_article_create",
     "args": {"title": "Spring launch", "spaceId": 3}, "ok": True, "status": "SUCCESS", "evidence": "e2"},
    {"type": "write.settled", "session": "s1", "node": "n1", "evidence": "e2", "tool": "cms_article_create",
     "status": "SUCCESS", "via": "answer"},
    {"type": "node.finished", "session": "s1", "node": "n1"},
    {"type": "task.finished", "session": "s1", "task": "t1", "state": "DONE", "reason": None},
]


def turn(session: Any, reply: Any) -> RunLog:
    """One run's mapping, start to RUN_FINISHED."""
    run = RunLog(run_id="r1", thread_id="s1", owner="o")
    mapper = RunMapper(run, session, b"k")
    mapper.start()
    mapper.progress("cms_space_list", "Looking up spaces")
    for ev in EVENTS:
        mapper.trace(ev)
    mapper.finish(reply)
    return run


def main() -> None:
    """Time the mapping and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=2000)
    n = parser.parse_args().turns
    session = SimpleNamespace(state=lambda: STATE, pending=lambda: None)
    reply = SimpleNamespace(text="Created article 17", task="t1", kind=None)
    events = len(turn(session, reply).events)
    rounds = []
    for _ in range(7):
        t = time.process_time()
        for _ in range(n):
            turn(session, reply)
        rounds.append((time.process_time() - t) / n)
    best = min(rounds)
    print(f"AG-UI mapping, one turn of 2 tool calls ({events} events)  {best * 1e6:.1f} µs")
    print(f"AG-UI mapping, per event  {best / events * 1e6:.2f} µs")


if __name__ == "__main__":
    main()
