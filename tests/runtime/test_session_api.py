"""The public Runtime/Session API with a recording model double: route, intent and plan prompts
(snapshots), state(), pending(), trace listeners, and a session reopened by id from the store."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from helpers.example_session import NoTools
from skillc.runtime import Runtime, Settings, Store, TraceWriter
from skillc.runtime.model import ModelDouble, ModelRequest, ModelResponse, ToolCall



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


def test_route_intent_plan_prompts_and_state(compiled_example: Any, tmp_path: Path, snapshot: Any) -> None:
    model = ModelDouble(answers)
    trace = TraceWriter()
    seen: list[str] = []
    trace.listeners.append(lambda ev: seen.append(ev["type"]))
    runtime = Runtime(compiled_example, NoTools(), model, Store(tmp_path / "s.sqlite"), Settings(), trace=trace,
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

    reopened = Runtime(compiled_example, NoTools(), ModelDouble([]), Store(tmp_path / "s.sqlite"), Settings())
    again = asyncio.run(reopened.open_session(session_id="api"))
    assert again.pending() == state["pending"]
    assert again.env.platform == {"userId": 7, "organId": 9}


def test_an_internal_error_in_a_turn_is_answered_not_raised(compiled_example: Any, tmp_path: Path) -> None:
    """A bug inside a turn is logged, recorded as an `error` event and answered; strict mode
    (tests, the scenario runner) lets it propagate."""

    def broken(request: ModelRequest) -> ModelResponse:
        if request.purpose == "route":
            return ModelResponse(choice={"agent": "editor"})
        raise ZeroDivisionError("boom")

    for strict in (False, True):
        trace = TraceWriter(keep=True)
        runtime = Runtime(compiled_example, NoTools(), ModelDouble(broken), Store(tmp_path / f"{strict}.sqlite"), Settings(),
                          trace=trace, strict=strict)

        async def go() -> Any:
            session = await runtime.open_session({"userId": 7}, session_id="x")
            return await session.send("hello")

        if strict:
            with pytest.raises(ZeroDivisionError):
                asyncio.run(go())
            continue
        reply = asyncio.run(go())
        assert "ZeroDivisionError" in reply.text and not reply.suspended
        errors = [e for e in trace.events if e["type"] == "error"]
        assert errors and "boom" in errors[0]["message"]
        assert trace.events[-1]["type"] == "turn.reply"
