"""`Session.send(agent=…)`: a task goes to the agent the user picked, without routing; an agent
that is not loadable is refused before anything happens."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from helpers.example_session import NoTools
from skillc.runtime import Runtime, Settings, Store, TraceWriter
from skillc.runtime.words.errors import UnknownAgent
from skillc.runtime.model import ModelDouble, ModelRequest, ModelResponse, ToolCall



def answers(request: ModelRequest) -> ModelResponse:
    """Routing would say `publisher`; the intent step picks the first skill it is offered."""
    if request.purpose == "route":
        return ModelResponse(choice={"agent": "publisher"})
    if request.purpose == "intent":
        offered = request.answer_schema["properties"]["skills"]["items"]["enum"]  # type: ignore[index]
        return ModelResponse(choice={"skills": offered[:1]})
    args = '{"question": "Which one?", "expectedFields": ["keyword"]}'
    return ModelResponse(tool_calls=[ToolCall("c1", "builtin_node_follow_up", args)])


def runtime_of(compiled_example: Any, tmp_path: Path, model: ModelDouble, trace: TraceWriter) -> Runtime:
    return Runtime(compiled_example, NoTools(), model, Store(tmp_path / "s.sqlite"), Settings(), trace=trace,
                   clock=lambda: 1_800_000_000.0, seed=1)


def test_a_picked_agent_is_used_without_routing(compiled_example: Any, tmp_path: Path) -> None:
    model, trace = ModelDouble(answers), TraceWriter(keep=True)
    runtime = runtime_of(compiled_example, tmp_path, model, trace)

    async def go() -> Any:
        session = await runtime.open_session({"userId": 7}, session_id="pick")
        return session, await session.send("Show me last month's invoices", agent="billing")

    session, reply = asyncio.run(go())
    routed = [e for e in trace.events if e["type"] == "agent.routed"]
    assert [(e["agent"], e["via"]) for e in routed] == [("billing", "user")]
    assert "route" not in [r.purpose for r in model.requests]  # the model was not asked to route
    assert session.state()["active_task"]["agent"] == "billing"
    assert all(skill.startswith("inv.") for skill in session.env.agent_skills("billing")) and reply.task == "t1"


def test_an_unknown_agent_is_refused_before_the_turn(compiled_example: Any, tmp_path: Path) -> None:
    model, trace = ModelDouble(answers), TraceWriter(keep=True)
    runtime = runtime_of(compiled_example, tmp_path, model, trace)

    async def go() -> Any:
        session = await runtime.open_session({"userId": 7}, session_id="nope")
        with pytest.raises(UnknownAgent) as info:
            await session.send("hello", agent="nobody")
        return session, info.value

    session, error = asyncio.run(go())
    assert error.name == "UNKNOWN_AGENT" and "'nobody'" in str(error) and "billing" in str(error)
    assert session.env.session.turn == 0 and trace.events == [] and model.requests == []
