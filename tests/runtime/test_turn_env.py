"""A session is split in three (issue 29, item 1): `Session` is the public face, `turn_env.TurnEnv`
the working modules' env with every field declared, `turn` the dispatch of a turn; `Durability`
reads and replaces the env's declared fields only."""
from __future__ import annotations

import ast
import asyncio
import inspect
from pathlib import Path
from typing import Any

from helpers.example_session import NoTools
from skillc.runtime import Runtime, Session, Settings, Store
from skillc.runtime import durable
from skillc.runtime.model import ModelDouble, ModelRequest, ModelResponse, ToolCall
from skillc.runtime.turn_env import TurnEnv


def test_the_session_class_is_its_public_face() -> None:
    public = {name for name in vars(Session) if not name.startswith("_")}
    assert public == {"id", "send", "answer", "acknowledge", "pending", "state"}


def _answers(request: ModelRequest) -> ModelResponse:
    if request.purpose == "route":
        return ModelResponse(choice={"agent": "publisher"})
    if request.purpose == "intent":
        return ModelResponse(choice={"skills": ["cms.article.find"]})
    if request.purpose == "plan":
        return ModelResponse(choice={"nodes": [{"id": "find", "skill": "cms.article.find", "deps": []}]})
    args = '{"question": "Which article?", "expectedFields": ["keyword"]}'
    return ModelResponse(tool_calls=[ToolCall("c1", "builtin_node_follow_up", args)])


def test_nothing_hangs_attributes_of_its_own_on_an_env(compiled_example: Any, tmp_path: Path) -> None:
    # the indexes used to be attributes set on the session object by whoever asked first
    runtime = Runtime(compiled_example, NoTools(), ModelDouble(_answers), Store(tmp_path / "s.sqlite"), Settings(),
                      clock=lambda: 1_800_000_000.0, seed=3)

    async def go() -> Session:
        session = await runtime.open_session({"userId": 7}, session_id="split")
        await session.send("Find the spring article")
        return session

    session = asyncio.run(go())
    env = session.env
    assert isinstance(env, TurnEnv) and not hasattr(env, "__dict__")
    assert env.studio is None and env.durable.s is env  # the turn's pin is let go at its end
    assert session.pending() is not None and env.task is not None


def test_durability_writes_no_private_field_of_the_session() -> None:
    tree = ast.parse(inspect.getsource(durable))
    def is_session(value: ast.expr) -> bool:  # `s` (= self.s) or `self.s`
        return (isinstance(value, ast.Name) and value.id == "s") or (
            isinstance(value, ast.Attribute) and value.attr == "s" and isinstance(value.value, ast.Name))

    private = [node.attr for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and is_session(node.value) and node.attr.startswith("_")]
    assert private == []
    hints = inspect.signature(durable.Durability.__init__).parameters["session"].annotation
    assert hints == "HeldSession"
