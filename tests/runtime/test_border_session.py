"""Hostile values through a real Session (compiled studio, fake gateway, a real SQLite store):
model arguments and tool responses with lone surrogates, deep nesting and huge numbers are each
refused (ARG_JSON_INVALID / ARG_REJECTED) or settled (a write's unreadable answer is a business
failure, never an uncertain write), the turn ends with a reply, it is stored, and the session
works on afterwards (issue 12, item 5)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc.runtime.text import border
from skillc.runtime.outside.config import Settings
from skillc.runtime.mcp.result import CallOutcome
from skillc.runtime.model.base import ModelRequest, ModelResponse, ToolCall
from skillc.runtime.model.double import ModelDouble
from skillc.runtime.session import Runtime
from skillc.runtime.store import Store
from skillc.runtime.telemetry.trace import TraceWriter
from helpers.node_harness import PLATFORM, START, FakeGateway, agent, skill

CONTRACT = """
{ "target": "doc_save",
  "tools": {
    "doc_save": { "sideEffect": "WRITE", "confirm": false, "idempotencyKey": ["title"],
                  "args": { "title": { "sources": ["USER", "MODEL"] } },
                  "success": { "path": "code", "op": "EQ", "value": 0 },
                  "extracts": [ { "key": "doc", "path": "data" } ] },
    "doc_search": { "args": { "q": { "sources": ["USER", "MODEL"] } },
                    "success": { "path": "code", "op": "EQ", "value": 0 },
                    "extracts": [ { "key": "docs", "path": "data" } ] } } }
"""
STUDIO = {"agents": [agent("ed", ["doc.write"])], "skills": [skill("doc.write", ["doc_save", "doc_search"], CONTRACT)]}
SETTINGS = {"state.write-confirm-bypass-tools": ["doc_save"], "no-progress-limit": 20}


def _deep(n: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(n):
        value = [value]
    return value


HOSTILE_VALUES = [
    "\ud800", "ok\udfffok", {"\udc00": 1}, _deep(100), _deep(5000), 10 ** 500, -(10 ** 5000), float("inf"),
    float("nan"), "x" * 1_100_000,
]
HOSTILE_TEXTS = ['{"title": "\\ud800"}', "[" * 5000 + "]" * 5000, '{"title": ' + "9" * 4301 + "}",
                 '{"title": ' + "[" * 3000 + "]" * 3000 + "}", '{"title": 1e999}', "\ud800"]


def _text(value: Any) -> str:
    try:
        return json.dumps({"title": value}, ensure_ascii=True)
    except (ValueError, RecursionError):
        return '{"title": "?"}'


hostile_args = st.one_of(
    st.sampled_from(HOSTILE_TEXTS),
    st.sampled_from(HOSTILE_VALUES).map(lambda v: {"title": v}),  # an adapter handing over parsed values
    st.sampled_from(HOSTILE_VALUES[:4]).map(_text),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF) | st.characters(max_codepoint=0x7F),
            max_size=6).map(lambda t: json.dumps({"title": t})),
)
hostile_responses = st.one_of(st.sampled_from(HOSTILE_VALUES).map(lambda v: {"code": 0, "data": v}),
                              st.sampled_from(HOSTILE_VALUES).map(lambda v: {"code": v}),
                              st.sampled_from(HOSTILE_VALUES))


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from skillc.compiler.build import compile_studio
    from skillc.compiler.sources import studio_from_mapping
    from skillc.runtime.compiled.loader import load_compiled

    out = tmp_path_factory.mktemp("border") / "compiled"
    compile_studio(studio_from_mapping(STUDIO, origin="border"), out)
    return load_compiled(out)


class Gateway(FakeGateway):
    """Answers doc_save / doc_search with the response under test, once; then plain answers."""

    def __init__(self, response: Any) -> None:
        super().__init__({"doc_save": {"responses": [{"code": 0, "data": {"id": 5}}]},
                          "doc_search": {"responses": [{"code": 0, "data": []}]}})
        self.hostile: list[Any] = [response]

    async def call(self, tool: str, args: dict[str, Any], *, timeout: float | None = None) -> CallOutcome:
        self.calls.append((tool, args))
        if self.hostile:
            return CallOutcome(response=self.hostile.pop(), error=None, message="")
        return await super().call(tool, args)


def _step(n: int, name: str, args: Any) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCall(id=f"c{n}", name=name, arguments=args)])


async def _drive(compiled: Any, db: Path, tool: str, args: Any, response: Any) -> tuple[list[dict[str, Any]], Any]:
    steps = [_step(1, tool, args), _step(2, "doc_save", '{"title": "Spring"}'),
             _step(3, "builtin_node_finish", '{"output": "done"}')]
    after = [_step(4, "builtin_node_finish", '{"output": "still here"}')]

    def answer(request: ModelRequest) -> ModelResponse:
        if request.purpose != "step":
            raise AssertionError(request.purpose)
        return (steps or after).pop(0)

    trace = TraceWriter(keep=True)
    gateway = Gateway(response)
    store = Store(db)
    try:
        runtime = Runtime(compiled, gateway, ModelDouble(answer), store, Settings.from_mapping(SETTINGS),
                          clock=lambda: START, trace=trace, seed=1)
        session = await runtime.open_session(PLATFORM, session_id="s1")
        await session.send("Save a doc titled Spring")
        # the same session from the store, in a new runtime: it was stored, it opens, it works on
        reopened = Runtime(compiled, gateway, ModelDouble(answer), Store(db), Settings.from_mapping(SETTINGS),
                           clock=lambda: START, trace=trace, seed=1)
        again = await reopened.open_session(PLATFORM, session_id="s1")
        return trace.events, again.state()
    finally:
        store.close()


def _check(events: list[dict[str, Any]], state: Any) -> None:
    turns = [e for e in events if e["type"] == "turn.reply"]
    assert len(turns) == 1, [e["type"] for e in events][-5:]
    assert not [e for e in events if e["type"] == "error"], [e for e in events if e["type"] == "error"]
    calls = [e for e in events if e["type"] == "tool.call"]
    assert calls
    json.dumps(events, ensure_ascii=False, default=str).encode("utf-8")  # everything traced is keepable
    # no write is left uncertain or in flight
    assert all(ev["status"] in ("SUCCESS", "FAILED") for ev in state["evidence"].values()), state["evidence"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(tool=st.sampled_from(["doc_save", "doc_search", "builtin_output_set", "builtin_env_hash"]), args=hostile_args)
def test_hostile_model_arguments_are_refused_and_the_session_goes_on(compiled: Any, tmp_path_factory: Any,
                                                                    tool: str, args: Any) -> None:
    db = tmp_path_factory.mktemp("args") / "s.sqlite"
    events, state = asyncio.run(_drive(compiled, db, tool, args, {"code": 0, "data": {"id": 1}}))
    _check(events, state)
    first = next(e for e in events if e["type"] == "tool.call")
    try:
        border.parse(args) if isinstance(args, str) else border.check(args)
    except border.Refused:  # what the border refuses is refused with the spec's codes
        assert first["error"] in ("ARG_JSON_INVALID", "ARG_REJECTED"), first


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(tool=st.sampled_from(["doc_save", "doc_search"]), response=hostile_responses)
def test_hostile_tool_answers_are_settled_and_the_session_goes_on(compiled: Any, tmp_path_factory: Any,
                                                                 tool: str, response: Any) -> None:
    db = tmp_path_factory.mktemp("responses") / "s.sqlite"
    events, state = asyncio.run(_drive(compiled, db, tool, '{"title": "Spring"}' if tool == "doc_save"
                                       else '{"q": "Spring"}', response))
    _check(events, state)
    first = next(e for e in events if e["type"] == "tool.call")
    if tool == "doc_save":  # the write was made and answered: settled, a business failure saying why
        settled = [e for e in events if e["type"] == "write.settled"]
        assert settled and settled[0]["via"] == "call"
        assert first["error"] == "TOOL_BUSINESS_FAILED" and first["status"] == "SUCCESS"
