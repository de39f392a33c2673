"""The scripted model (docs/reference/scenarios.md `model:` entries) and the callable/list test double."""
from __future__ import annotations

import asyncio
from typing import Any

import pytest

from skillc.runtime.model.base import ModelError, ModelRequest, ModelResponse, ToolCall
from skillc.runtime.model.double import ModelDouble
from skillc.runtime.model.scripted import ScriptedModel, UnusedEntry, check_entry

PLAN = {"nodes": [{"id": "a", "skill": "cms.article.lifecycle", "target": "cms_article_create", "deps": []}]}


def req(purpose: str) -> ModelRequest:
    return ModelRequest(purpose=purpose, messages=[{"role": "user", "content": "hi"}])  # type: ignore[arg-type]


def play(model: Any, *purposes: str) -> list[ModelResponse]:
    async def go() -> list[ModelResponse]:
        return [await model.complete(req(purpose)) for purpose in purposes]
    return asyncio.run(go())


def test_every_entry_kind() -> None:
    model = ScriptedModel([
        {"route": "editor"},
        {"intent": ["cms.article.lifecycle", "cms.space.read"]},
        {"plan": PLAN},
        {"call": {"tool": "cms_space_list", "args": {}}},
        {"calls": [{"tool": "cms_article_create", "args": {"title": "Spring", "spaceId": 3}},
                   {"tool": "cms_space_list"}]},
        {"text": "Done: article 17."},
    ])
    route, intent, plan, call, calls, text = play(model, "route", "intent", "plan", "step", "step", "step")
    assert route == ModelResponse(choice={"agent": "editor"})
    assert intent == ModelResponse(choice={"skills": ["cms.article.lifecycle", "cms.space.read"]})
    assert plan == ModelResponse(choice=PLAN)
    assert call == ModelResponse(tool_calls=[ToolCall("call_1", "cms_space_list", "{}")])
    assert calls == ModelResponse(tool_calls=[
        ToolCall("call_2", "cms_article_create", '{"title": "Spring", "spaceId": 3}'),
        ToolCall("call_3", "cms_space_list", "{}")])
    assert text == ModelResponse(text="Done: article 17.")
    assert [r.purpose for r in model.requests] == ["route", "intent", "plan", "step", "step", "step"]
    assert model.pending == [] and model.unused == []


def test_plan_choice_is_a_copy() -> None:
    model = ScriptedModel([{"plan": PLAN}])
    (response,) = play(model, "plan")
    response.choice["nodes"][0]["deps"].append("x")
    assert PLAN["nodes"][0]["deps"] == []


@pytest.mark.parametrize(("args", "sent"), [
    ("{not json", "{not json"),
    ('{"title": "raw"}', '{"title": "raw"}'),
    ("", ""),
    ([1, 2], "[1, 2]"),
    ({"title": "春"}, '{"title": "春"}'),
])
def test_args_as_string_are_raw_and_others_are_json(args: Any, sent: str) -> None:
    (response,) = play(ScriptedModel([{"call": {"tool": "cms_article_create", "args": args}}]), "step")
    assert response.tool_calls[0].arguments == sent


def test_text_may_accompany_calls() -> None:
    (response,) = play(ScriptedModel([{"call": {"tool": "t", "args": {}}, "text": "Checking."}]), "step")
    assert response.text == "Checking." and [c.name for c in response.tool_calls] == ["t"]


def test_call_ids_continue_across_turns() -> None:
    model = ScriptedModel([{"call": {"tool": "a", "args": {}}}])
    play(model, "step")
    model.load_turn([{"calls": [{"tool": "b", "args": {}}, {"tool": "c", "args": {}}]}])
    (response,) = play(model, "step")
    assert [c.id for c in response.tool_calls] == ["call_2", "call_3"]


@pytest.mark.parametrize(("entry", "asked", "kind"), [
    ({"route": "editor"}, "step", "route"),
    ({"intent": ["k"]}, "route", "intent"),
    ({"plan": PLAN}, "intent", "plan"),
    ({"call": {"tool": "t", "args": {}}}, "plan", "call"),
    ({"calls": [{"tool": "t", "args": {}}]}, "route", "calls"),
    ({"text": "hello"}, "intent", "text"),
])
def test_purpose_mismatch(entry: dict[str, Any], asked: str, kind: str) -> None:
    model = ScriptedModel([entry])
    with pytest.raises(ModelError) as caught:
        play(model, asked)
    assert str(caught.value).startswith(f"script: the runtime asked for {asked} but the next entry is {kind} "
                                        "(turn 1, entry 1: ")
    # The mismatched entry was not played: it is reported as unused when the turn ends.
    assert model.finish_turn() == [UnusedEntry(1, 1, entry)]


def test_used_up() -> None:
    model = ScriptedModel([{"route": "editor"}])
    play(model, "route")
    with pytest.raises(ModelError, match=r"^script: the runtime asked for intent after the script was used up"):
        play(model, "intent")
    assert len(model.requests) == 2


def test_leftovers_are_discarded_and_remembered() -> None:
    model = ScriptedModel([{"route": "editor"}, {"text": "left 1"}, {"text": "left 2"}])
    play(model, "route")
    model.load_turn([{"text": "turn two"}])
    assert model.unused == [UnusedEntry(1, 2, {"text": "left 1"}), UnusedEntry(1, 3, {"text": "left 2"})]
    assert play(model, "step")[0].text == "turn two"
    model.load_turn([{"text": "turn three, unused"}])
    assert model.finish_turn() == [UnusedEntry(3, 1, {"text": "turn three, unused"})]
    assert len(model.unused) == 3 and model.turn == 3
    with pytest.raises(ModelError, match="used up"):
        play(model, "step")


@pytest.mark.parametrize(("entry", "problem"), [
    ("route: editor", "must be a mapping"),
    ({}, "needs one of"),
    ({"say": "hi"}, "unknown entry key(s) say"),
    ({"route": "a", "intent": ["b"]}, "has one kind, got route, intent"),
    ({"route": ""}, "route needs an agent code"),
    ({"intent": "k"}, "intent needs a list"),
    ({"plan": [1]}, "plan needs a mapping"),
    ({"call": {"args": {}}}, "a call needs {tool"),
    ({"call": {"tool": "t", "arg": {}}}, "only tool and args, got arg"),
    ({"calls": []}, "calls needs a non-empty list"),
    ({"calls": [{"tool": "t"}, "x"]}, "a call needs {tool"),
    ({"text": 3}, "text needs a string"),
])
def test_malformed_entries_are_named_at_load(entry: Any, problem: str) -> None:
    assert problem in (check_entry(entry) or "")
    model = ScriptedModel([{"text": "kept"}])
    with pytest.raises(ModelError, match=r"^script: turn 2, entry 2: "):
        model.load_turn([{"text": "fine"}, entry])
    assert model.pending == [{"text": "kept"}]  # a refused turn changes nothing


def test_double_from_a_list_plays_in_order_and_raises_listed_errors() -> None:
    double = ModelDouble([ModelResponse(text="one"), ModelError("boom"), ModelResponse(choice={"agent": "x"})])
    assert play(double, "step")[0].text == "one"
    with pytest.raises(ModelError, match="boom"):
        play(double, "step")
    assert play(double, "route")[0].choice == {"agent": "x"}
    with pytest.raises(ModelError, match=r"no response left for request 4 \(plan\)"):
        play(double, "plan")
    assert [r.purpose for r in double.requests] == ["step", "step", "route", "plan"]


def test_double_from_a_callable_sync_or_async() -> None:
    double = ModelDouble(lambda request: ModelResponse(text=f"purpose={request.purpose}"))
    assert [r.text for r in play(double, "route", "step")] == ["purpose=route", "purpose=step"]

    async def answer(request: ModelRequest) -> ModelResponse:
        return ModelResponse(text=str(len(request.messages)))

    assert play(ModelDouble(answer), "step")[0].text == "1"
    with pytest.raises(TypeError, match="expected a ModelResponse, got str"):
        play(ModelDouble(lambda request: "oops"), "step")  # type: ignore[arg-type,return-value]
