"""Property: no value a model or a tool can send raises out of the chain. Hypothesis generates a
model's tool call (any name, any id, arguments as any text or any JSON-like value, hostile leaves
included) and the tool's answer (any JSON-like value, or text that the gateway reads the way an MCP
text block is read: deep, huge, invalid Unicode); each goes through the node's own path (the border
at the model's call, dispatch, the chain, recording into the trace file and the node's
conversation) of a real Session on SQLite. Whatever comes, a `CallResult` comes back, its trace
line is written as UTF-8, the node's conversation can be stored, and no write is left in flight.

Bounded in time: 200 examples, no per-example deadline (the machine is shared): about 15 s of CPU."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc.runtime.text import jsontext
from skillc.runtime.outside.config import Settings
from skillc.runtime.mcp.result import CallOutcome, ToolInfo, response_json
from skillc.runtime.model.base import ToolCall
from skillc.runtime.loop.node import _at_border, dispatch, observe
from skillc.runtime.session import Runtime
from skillc.runtime.seam.state import NodeState, TaskState
from skillc.runtime.store import Store
from skillc.runtime.telemetry.trace import TraceWriter

from helpers.node_harness import PLATFORM, START, agent, skill

CONTRACT = """
{ "tools": {
    "doc_save": { "sideEffect": "WRITE", "confirm": false, "idempotencyKey": ["title"],
                  "args": { "title": { "sources": ["USER", "MODEL"] },
                            "owner": { "from": "platform.userId" },
                            "ref": { "sources": ["EVIDENCE"], "required": false } },
                  "success": { "path": "code", "op": "EQ", "value": 0 },
                  "error": { "code": "err.code", "message": "err.msg" },
                  "extracts": [ { "key": "doc", "path": "data.items" } ] },
    "doc_find": { "args": { "q": { "sources": ["USER", "MODEL"] } },
                  "success": { "path": "code", "op": "EQ", "value": 0 },
                  "extracts": [ { "key": "docs", "path": "data.0.id", "entity": { "type": "doc" } } ] } } }
"""
TOOLS = ["doc_save", "doc_find"]
HOSTILE_TEXT = st.sampled_from(["\ud800", "a\udfffb", "9" * 5000, "²", "١٢", "\x00", "\u202e", ""])
LONG = "x" * 1_000_050  # past the border's string limit
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=10 ** 400, max_value=10 ** 500),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20), HOSTILE_TEXT)
VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8) | HOSTILE_TEXT,
                                                                                           inner, max_size=4), max_leaves=12)


def _deep_text(depth: int, opener: str) -> str:
    return opener * depth + {"[": "]", "{": "}"}[opener] * depth if opener == "[" else '{"a":' * depth + "1" + "}" * depth


def _text_of(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return "{}"


NAMES = st.one_of(st.sampled_from(TOOLS + ["builtin_output_set", "builtin_node_follow_up", "builtin_env_hash",
                                           "builtin_nope", "doc_save\ud800", "d" * 300]), st.text(max_size=30))
ARGS = st.one_of(VALUES.map(lambda v: {"title": v, "q": v}), VALUES, VALUES.map(_text_of),
                 st.text(max_size=40), st.sampled_from([_deep_text(5000, "["), _deep_text(3000, "{"), '{"title": 1e999}',
                                                        '{"title": "\\ud800"}', "{" * 70 + "}" * 70,
                                                        json.dumps({"title": LONG})]))
ANSWERS = st.one_of(VALUES.map(lambda v: ("value", {"code": 0, "data": v})), VALUES.map(lambda v: ("value", v)),
                    VALUES.map(lambda v: ("text", _text_of({"code": 0, "data": v}))), st.text(max_size=40).map(lambda t: ("text", t)),
                    st.sampled_from([("text", _deep_text(5000, "[")), ("text", _deep_text(3000, "{")),
                                     ("text", '{"code": ' + "9" * 5000 + "}"), ("text", '{"code": 0, "x": "\\udc00"}'),
                                     ("value", {"code": 0, "data": LONG})]))


class Answering:
    """A gateway whose next answer is set by the example; an MCP text block is read as the
    gateway reads one (`response_json`), deep text included."""

    def __init__(self) -> None:
        self.catalog = {t: ToolInfo(name=t, title=None, description=None, input_schema={"type": "object"},
                                     server="t") for t in TOOLS}
        self.answer: tuple[str, Any] = ("value", {"code": 0})

    async def call(self, tool: str, args: dict[str, Any], *, timeout: float | None = None) -> CallOutcome:
        kind, value = self.answer
        if kind == "value":
            return CallOutcome(value, None, "")
        try:
            return CallOutcome(response_json(SimpleNamespace(structured_content=None,
                                                             content=[SimpleNamespace(type="text", text=value)])), None, value)
        except jsontext.TooDeep as exc:
            return CallOutcome(None, None, "", unreadable=f"JSON {exc}")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from skillc.compiler.build import compile_studio
    from skillc.compiler.sources import studio_from_mapping
    from skillc.runtime.compiled.loader import load_compiled

    tmp = tmp_path_factory.mktemp("props")
    compile_studio(studio_from_mapping({"agents": [agent("a", ["doc.props"])],
                                        "skills": [skill("doc.props", TOOLS, CONTRACT)]}, origin="props"), tmp / "compiled")
    gateway = Answering()
    module = load_compiled(tmp / "compiled").skills["doc.props"]
    studio = SimpleNamespace(skills={"doc.props": module}, agents={}, rejected={})  # as tests of the chain hold it
    runtime = Runtime(studio, gateway, None, Store(tmp / "store.sqlite"),
                      Settings.from_mapping({"state.write-confirm-bypass-tools": ["doc_save"]}),
                      clock=lambda: START, seed=1, trace=TraceWriter(str(tmp / "trace.jsonl")))
    return SimpleNamespace(runtime=runtime, gateway=gateway, count=0, tmp=tmp)


@settings(max_examples=200, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(name=NAMES, call_id=st.text(max_size=10) | HOSTILE_TEXT, args=ARGS, answer=ANSWERS)
def test_nothing_a_model_or_a_tool_sends_raises_out_of_the_chain(world: Any, name: str, call_id: str, args: Any,
                                                                  answer: tuple[str, Any]) -> None:
    world.count += 1
    world.gateway.answer = answer

    async def one() -> None:
        session = (await world.runtime.open_session(PLATFORM, session_id=f"p{world.count}")).env
        task = TaskState(id="t1", session=session.id, agent="a", message="m", turn=1)
        node = NodeState(id="n1", task="t1", skill="doc.props", state="RUNNING")
        task.nodes["n1"], session.task = node, task
        task.order.append("n1")
        session.session.turn = 1
        call = _at_border(ToolCall(id=call_id, name=name, arguments=args))  # type: ignore[arg-type]  # any value
        result = await dispatch(session, node, call.name, call.arguments)
        observe(node, call.name, result, call_id=call.id)
        json.dumps(node.messages, ensure_ascii=False).encode("utf-8")  # the conversation can be kept
        await session.save()
        assert all(ev.status not in ("STARTED", "UNKNOWN_PRE_CALL") for ev in session.evidence.values())
    asyncio.run(one())


def test_the_trace_of_every_example_is_utf8_json_lines(world: Any) -> None:
    path = Path(world.tmp) / "trace.jsonl"
    if not path.exists():
        pytest.skip("run with the property test")
    lines = [line for line in path.read_text(encoding="utf-8").split("\n") if line]  # not splitlines: U+2028 is text
    assert len(lines) >= world.count
    for line in lines:
        json.loads(line)
