"""A hostile model never crashes a turn.

Hypothesis drives a real `Session` (compiled studio, fake gateway, real store) with random model
answers: route/intent/plan choices of any shape, step responses calling random tool names (the
builtins, the business tools, made-up names) with random argument text (any JSON value, wrong
types for builtin arguments, or text that is not JSON), and random decisions while a question
is pending. Every turn must end with a `turn.reply` as its last event, and the only `error`
event allowed is the script running out (a ModelError; docs/interpretations.md: A turn whose script or model
fails).
"""
from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc.runtime.loop import builtins
from skillc.runtime.outside.config import Settings
from skillc.runtime.session import Runtime
from skillc.runtime.model.base import ModelError, ModelRequest, ModelResponse, ToolCall
from skillc.runtime.model.double import ModelDouble
from skillc.runtime.store import Store
from skillc.runtime.telemetry.trace import TraceWriter
from helpers.node_harness import PLATFORM, START, FakeGateway, agent, skill

EXHAUSTED = "fuzz script exhausted"
DEFAULT_CHOICES = {"route": {"agent": "ed"}, "intent": {"skills": ["doc.write", "space.find"]},
                   "plan": {"nodes": [{"id": "a", "skill": "space.find"}, {"id": "b", "skill": "doc.write", "deps": ["a"]}]}}

WRITER = """
{ "target": "doc_save",
  "inputs": { "space": { "from": "session.space", "provider": "space.find" } },
  "outputs": { "docId": { "sources": ["EVIDENCE", "USER"], "share": "SESSION",
                          "entity": { "type": "doc", "scalar": "id" } },
               "tags": { "type": "LIST", "fields": ["name"], "required": false, "constant": ["a"] } },
  "tools": {
    "doc_save": { "sideEffect": "WRITE", "idempotencyKey": ["title"],
                  "args": { "title": { "sources": ["USER"], "label": "Title" },
                            "space": { "from": "inputs.space", "sources": ["MODEL"] },
                            "owner": { "from": "platform.userId" } },
                  "success": { "path": "code", "op": "EQ", "value": 0 },
                  "extracts": [ { "key": "doc", "path": "data", "entity": { "type": "doc" } } ] },
    "doc_search": { "args": { "q": { "sources": ["USER", "MODEL"] } },
                    "success": { "path": "code", "op": "EQ", "value": 0 },
                    "extracts": [ { "key": "docs", "path": "data" } ] }
  } }
"""
FINDER = """
{ "delegatable": true, "mode": "PLAN",
  "outputs": { "space": { "share": "SESSION", "sources": ["EVIDENCE"] } },
  "tools": { "space_list": { "success": { "path": "code", "op": "EQ", "value": 0 },
                             "extracts": [ { "key": "spaces", "path": "data" } ] } } }
"""
OTHER = """{ "tools": { "misc_get": { "success": { "path": "ok", "op": "TRUTHY" } } } }"""

STUDIO = {
    "agents": [agent("ed", ["doc.write", "space.find"]), agent("misc", ["misc.read"])],
    "skills": [skill("doc.write", ["doc_save", "doc_search"], WRITER),
               skill("space.find", ["space_list"], FINDER),
               skill("misc.read", ["misc_get"], OTHER)],
}
TOOLS = {
    "doc_save": {"responses": [{"code": 0, "data": {"id": 5, "name": "Spring"}}, {"code": 1, "msg": "dup"}]},
    "doc_search": {"responses": [{"code": 0, "data": [{"id": 5, "name": "Spring"}]}, {"code": 0, "data": []}]},
    "space_list": {"responses": [{"code": 0, "data": [{"id": 3, "name": "Web"}]}]},
    "misc_get": {"responses": [{"ok": True}]},
}

NAMES = sorted(builtins.SPECS) + ["doc_save", "doc_search", "space_list", "misc_get", "builtin_nope", "", "drop table"]
KEYS = ["question", "expectedFields", "suggestions", "summary", "toolName", "output", "reason", "skillKey",
        "objective", "key", "value", "sourceType", "sourceRef", "sourcePath", "evidenceId", "title", "q", "space",
        "input", "inputPattern", "outputPattern", "base", "amount", "unit", "from", "to", "date", "min", "max",
        "algorithm", "length"]
WORDS = ["doc_save", "docId", "tags", "space", "EVIDENCE", "USER", "MODEL", "CONTRACT", "e1", "e2", "data",
         "data.id", "space.find", "doc.write", "misc.read", "title", "Spring", "2027-01-01", "DAYS", "sha256", ""]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**12), st.floats(allow_nan=True),
                    st.sampled_from(WORDS), st.text(max_size=8))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS + WORDS), inner, max_size=3)), max_leaves=8)
arg_objects = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=5)


def _arg_text(value: Any) -> str:
    try:
        return json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        return "{}"


arg_texts = st.one_of(arg_objects.map(_arg_text), json_values.map(_arg_text),
                      st.sampled_from(["", "{not json", "[", "null", "\"x\""]))
# well-formed calls move the task forward (provider, write, approval, outputs, delegation), so the
# random ones land in every state of a node, not only at its start
GOOD = [("space_list", {}), ("doc_search", {"q": "Spring"}), ("doc_save", {"title": "Spring"}),
        ("builtin_node_approval", {"summary": "Save?", "toolName": "doc_save"}),
        ("builtin_node_finish", {"output": "done"}), ("builtin_node_fail", {"reason": "gave up"}),
        ("builtin_output_set", {"key": "space", "value": 3, "sourceType": "EVIDENCE", "sourceRef": "e1",
                                "sourcePath": "data.0.id"}),
        ("builtin_output_set", {"key": "docId", "value": 5, "sourceType": "EVIDENCE", "sourceRef": "e2",
                                "sourcePath": "data.id"}),
        ("builtin_output_set", {"key": "docId", "value": "Spring", "sourceType": "USER"}),
        ("builtin_node_delegate", {"skillKey": "space.find", "objective": "find"}),
        ("builtin_node_follow_up", {"question": "Title?", "expectedFields": ["title"]}),
        ("builtin_node_follow_up", {"question": "Which one?"})]
good_calls = st.sampled_from(GOOD).map(lambda c: (c[0], json.dumps(c[1])))
calls = st.lists(st.one_of(good_calls, good_calls, st.tuples(st.sampled_from(NAMES), arg_texts)), max_size=3)
random_steps = st.lists(st.tuples(st.text(max_size=5), calls), max_size=2)
# The happy path of the default plan (provider node a, then the write node b), each of its steps
# preceded by up to two random ones and the whole cut at a random length.
HAPPY = [[GOOD[0]], [GOOD[6]], [GOOD[4]], [GOOD[2]], [GOOD[3]], [GOOD[7]], [GOOD[4]]]


@st.composite
def steps(draw: Any) -> list[tuple[str, list[tuple[str, str]]]]:
    out: list[tuple[str, list[tuple[str, str]]]] = []
    for happy in HAPPY[: draw(st.integers(0, len(HAPPY)))]:
        out += draw(random_steps)
        out.append(("", [(name, json.dumps(args)) for name, args in happy]))
    return out + draw(random_steps)


choices = st.one_of(json_values, st.fixed_dictionaries({"agent": st.sampled_from(["ed", "misc", "x"])}),
                    st.fixed_dictionaries({"skills": st.lists(st.sampled_from(["doc.write", "space.find", "no"]), max_size=3)}),
                    st.fixed_dictionaries({"nodes": st.lists(st.fixed_dictionaries(
                        {"id": st.sampled_from(["a", "b", "p1", "d1", "n1"]),
                         "skill": st.sampled_from(["doc.write", "space.find", "misc.read"]),
                         "target": st.sampled_from(["doc_save", "doc_search", "x"]),
                         "deps": st.lists(st.sampled_from(["a", "b", "p1"]), max_size=2)}), max_size=3)}))
decisions = st.one_of(st.fixed_dictionaries({"decision": st.sampled_from(["CONFIRM", "REJECT", "CANCEL", "maybe"])}),
                      st.fixed_dictionaries({"verified": st.one_of(st.booleans(), st.just("yes"))}),
                      st.just({}))
turn_inputs = st.tuples(st.sampled_from(["Save a doc titled Spring", "Spring"]), st.lists(st.one_of(
    st.sampled_from(["Save a doc titled Spring", "Spring", "yes"]), decisions,
    st.just({"decision": "CONFIRM"})), max_size=5)).map(lambda t: [t[0], *t[1]])


class Responder:
    """Plays the drawn answers: choices for route/intent/plan, step responses for steps."""

    def __init__(self, choice_list: list[Any], step_list: list[tuple[str, list[tuple[str, str]]]]) -> None:
        self.choices = list(choice_list)
        self.steps = list(step_list)
        self.n = 0

    def __call__(self, request: ModelRequest) -> ModelResponse:
        if request.purpose != "step":
            if self.choices:
                return ModelResponse(choice=self.choices.pop(0))
            # drawn choices used up: a sensible answer, so that the steps get exercised
            return ModelResponse(choice=DEFAULT_CHOICES[request.purpose])
        if not self.steps:
            raise ModelError(EXHAUSTED)
        text, step_calls = self.steps.pop(0)
        self.n += 1
        return ModelResponse(text=text, tool_calls=[ToolCall(id=f"c{self.n}-{i}", name=name, arguments=args)
                                                    for i, (name, args) in enumerate(step_calls)])


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from skillc.compiler.build import compile_studio
    from skillc.compiler.sources import studio_from_mapping
    from skillc.runtime.compiled.loader import load_compiled

    out = tmp_path_factory.mktemp("fuzz") / "compiled"
    compile_studio(studio_from_mapping(STUDIO, origin="fuzz"), out)
    return load_compiled(out)


async def _drive(compiled: Any, choice_list: list[Any], step_list: list[Any], inputs: list[Any]) -> None:
    trace = TraceWriter(keep=True)
    settings_ = Settings.from_mapping({"no-progress-limit": 6, "node-step-limit": 12,
                                       "state.write-confirm-bypass-tools": []})
    runtime = Runtime(compiled, FakeGateway(TOOLS), ModelDouble(Responder(choice_list, step_list)), Store(":memory:"),
                      settings_, clock=lambda: START, trace=trace, seed=1)
    session = await runtime.open_session(PLATFORM, session_id="s1")
    for item in inputs:
        before = len(trace.events)
        if isinstance(item, str):
            await session.send(item)
        else:
            await session.answer(item)
        turn = trace.events[before:]
        assert turn and turn[0]["type"] == "turn.started"
        assert turn[-1]["type"] == "turn.reply", turn[-3:]
        assert sum(e["type"] == "turn.reply" for e in turn) == 1
        errors = [e for e in turn if e["type"] == "error"]
        assert all(EXHAUSTED in e["message"] for e in errors), errors
        for e in turn:
            if e["type"] == "tool.call" and not e["ok"] and e["builtin"] and e["tool"] in builtins.HANDLERS:
                # a refused node builtin always names its rejection
                assert e["error"], e


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(choice_list=st.lists(choices, max_size=1), step_list=steps(), inputs=turn_inputs)
def test_a_hostile_model_never_crashes_a_turn(compiled: Any, choice_list: list[Any], step_list: list[Any],
                                              inputs: list[Any]) -> None:
    asyncio.run(_drive(compiled, choice_list, step_list, inputs))


def test_wrong_builtin_argument_types_are_named_rejections(compiled: Any) -> None:
    """Wrong argument types for builtins (here in the provider node p1) are clear rejections (FORMAT: every rejection is a
    tool.call with ok false and its error name), and the turn still ends with a reply."""
    bad = [("builtin_node_follow_up", {"question": "Which?", "expectedFields": "title"}),
           ("builtin_node_delegate", {"skillKey": 5}),
           ("builtin_output_set", {"key": {"a": 1}, "value": 1, "sourceType": "USER"}),
           ("builtin_output_set", {"key": "space", "value": {"id": 5}, "sourceType": ["EVIDENCE"]}),
           ("builtin_state_set", {"key": 3, "value": 1}),
           ("builtin_node_approval", {"summary": 1, "toolName": None}),
           ("builtin_node_finish", {"output": "   "}),
           ("builtin_evidence_get", {"evidenceId": None})]
    step_list = [("", [(name, json.dumps(args))]) for name, args in bad]
    trace_events = asyncio.run(_drive_events(compiled, [{"agent": "ed"}, {"skills": ["doc.write"]}], step_list))
    refused = [(e["tool"], e["error"]) for e in trace_events if e["type"] == "tool.call"]
    assert refused == [("builtin_node_follow_up", "FOLLOW_UP_UNGROUNDED"), ("builtin_node_delegate", "SKILL_NOT_FOUND"),
                       ("builtin_output_set", "OUTPUT_PATH_INVALID"), ("builtin_output_set", "SOURCE_REJECT"),
                       ("builtin_state_set", "STATE_KEY_RESERVED"), ("builtin_node_approval", "APPROVAL_NOT_GATED"),
                       ("builtin_node_finish", "FINISH_MISSING_OUTPUT"), ("builtin_evidence_get", "EVIDENCE_PATH_INVALID")]


async def _drive_events(compiled: Any, choice_list: list[Any], step_list: list[Any]) -> list[dict[str, Any]]:
    trace = TraceWriter(keep=True)
    runtime = Runtime(compiled, FakeGateway(TOOLS), ModelDouble(Responder(choice_list, step_list)), Store(":memory:"),
                      Settings.from_mapping({"no-progress-limit": 20}), clock=lambda: START, trace=trace, seed=1)
    session = await runtime.open_session(PLATFORM, session_id="s1")
    await session.send("Save a doc titled Spring")
    assert trace.events[-1]["type"] == "turn.reply"
    return trace.events
