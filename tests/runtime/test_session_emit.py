"""A session's `env.emit` (runtime/turn_env.py) is the one way an event of a session reaches the
trace, the service's `studio.stale` too (before_turn: stamped with the turn it starts, and no
task: none is that turn's yet; it had been written past the session with a turn number of its own)."""
from __future__ import annotations

import asyncio
from pathlib import Path

from helpers.node_harness import PLATFORM, Harness, agent, skill, step

from skillc.runtime.telemetry.trace import TraceWriter
from skillc.runtime.words.event_types import StudioStale
from skillc.runtime.words.events import EventName

STALE: StudioStale = {"type": EventName.STUDIO_STALE, "source": "studio/", "error": "unreachable", "since": 1.0}
READ = """{ "tools": { "page_get": { "args": { "slug": { "sources": ["MODEL"] } } } } }"""


def test_studio_stale_is_the_coming_turns_and_names_no_task(tmp_path: Path) -> None:
    h = Harness(tmp_path, {"agents": [agent("a", ["p.read"])], "skills": [skill("p.read", ["page_get"], READ)]},
                {"page_get": {"responses": [{"code": 0}]}})
    h.runtime.trace = TraceWriter(keep=True)

    async def scenario() -> None:
        s = await h.runtime.open_session(PLATFORM, session_id="s1")
        s.env.emit(STALE, before_turn=True)
        h.script.add([step(("builtin_node_follow_up", {"question": "Which page?", "expectedFields": ["slug"]}))])
        await s.send("Get a page")
        assert s.env.task is not None  # the task waits for the answer
        s.env.emit(STALE, before_turn=True)
    asyncio.run(scenario())
    stale = [e for e in h.runtime.trace.events if e["type"] == "studio.stale"]
    assert [(e["turn"], "task" in e) for e in stale] == [(1, False), (2, False)]
    assert list(stale[0]) == ["seq", "type", "session", "turn", "source", "error", "since", "prev", "hash"]
