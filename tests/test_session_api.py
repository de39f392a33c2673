"""The public Runtime/Session API with a recording model double: route, intent and plan prompts
(snapshots), state(), pending(), trace listeners, and a session reopened by id from the store."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from skillc.compiler import compile_studio
from skillc.runtime import Runtime, Settings, Store, TraceWriter, load_compiled
from skillc.runtime.model import ModelDouble, ModelRequest, ModelResponse, ToolCall

ROOT = Path(__file__).resolve().parents[1]


class NoTools:
    """A gateway with an empty catalog (the model double never reaches a business tool)."""

    catalog: dict[str, Any] = {}
    on_invoked = None

    async def call(self, tool: str, args: dict[str, Any], timeout: float | None = None) -> Any:
        raise AssertionError(f"unexpected call of {tool}")


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("compiled")
    compile_studio(ROOT / "examples" / "studio", out)
    return load_compiled(out)


def answers(request: ModelRequest) -> ModelResponse:
    if request.purpose == "route":
        return ModelResponse(choice={"agent": "publisher"})
    if request.purpose == "intent":
        return ModelResponse(choice={"skills": ["cms.article.find", "cms.article.rename"]})
    if request.purpose == "plan":
        return ModelResponse(choice={"nodes": [{"id": "find", "skill": "cms.article.find", "deps": []},
                                               {"id": "rename", "skill": "cms.article.rename", "deps": ["find"],
                                                "target": "cms_article_rename"}]})
    args = '{"question": "Which article?", "expectedFields": ["keyword"]}'
    return ModelResponse(tool_calls=[ToolCall("c1", "builtin_node_follow_up", args)])


def test_route_intent_plan_prompts_and_state(studio: Any, tmp_path: Path, snapshot: Any) -> None:
    model = ModelDouble(answers)
    trace = TraceWriter()
    seen: list[str] = []
    trace.listeners.append(lambda ev: seen.append(ev["type"]))
    runtime = Runtime(studio, NoTools(), model, Store(tmp_path / "s.sqlite"), Settings(), trace=trace,
                      clock=lambda: 1_800_000_000.0, seed=3)

    async def go() -> Any:
        session = await runtime.open_session({"userId": 7, "organId": 9}, session_id="api")
        reply = await session.send("Rename the spring article to Spring 2027")
        return session, reply

    session, reply = asyncio.run(go())
    assert reply.suspended and reply.kind == "FOLLOW_UP" and reply.text == "Which article?"
    purposes = [r.purpose for r in model.requests]
    assert purposes[:3] == ["route", "intent", "plan"]
    for request in model.requests[:3]:
        assert request.answer_schema is not None
    assert [r.messages[0]["content"] for r in model.requests[:3]] == snapshot
    state = session.state()
    assert state["active_task"]["nodes"]["find"]["state"] == "SUSPENDED"
    assert state["pending"] == {"kind": "FOLLOW_UP", "question": "Which article?", "node": "find",
                                "expected_fields": ["keyword"]}
    assert seen[:3] == ["turn.started", "agent.routed", "task.planned"] and seen[-1] == "turn.reply"

    reopened = Runtime(studio, NoTools(), ModelDouble([]), Store(tmp_path / "s.sqlite"), Settings())
    again = asyncio.run(reopened.open_session(session_id="api"))
    assert again.pending() == state["pending"]
    assert again.platform == {"userId": 7, "organId": 9}
