"""Node inputs (§7) and what the node prompt says about inputs and outputs (§8), through the
runtime API; plus the completion check a scenario cannot reach (FINISH_OUTPUT_SOURCE, §10.2 #3).
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from helpers.node_harness import Harness, agent, choice, skill, step

from skillc.runtime import support as rt
from skillc.runtime.loop.completion import finish_check

FIRST = """{ "outputs": { "title": { "sources": ["USER"] }, "articleId": { "sources": ["USER"] } } }"""
SECOND = """{
  "inputs": {
    "space":     { "from": "session.space" },
    "region":    { "from": "shared.region" },
    "tag":       { "from": "shared.tag", "required": false },
    "articleId": { "from": "outputs.articleId" },
    "title":     { }
  },
  "outputs": {
    "lines": { "type": "LIST", "fields": ["sku", "qty"], "minItems": 2, "hint": "one per product",
               "sources": ["EVIDENCE"] },
    "memo":  { "required": false, "hint": "a short note" }
  },
  "tools": { "t": { "args": { "space": { "from": "inputs.space" } } } }
}"""


def harness(tmp_path: Path) -> Harness:
    studio = {"agents": [agent("ag", ["first.skill", "second.skill"])],
              "skills": [skill("first.skill", ["t"], FIRST), skill("second.skill", ["t"], SECOND)]}
    return Harness(tmp_path, studio, {"t": {"responses": [{"code": 0}]}})


def run_two_nodes(h: Harness) -> Any:
    async def scenario() -> Any:
        s = await h.session()
        s.env.session.values["space"] = {"id": 3, "name": "Website"}
        h.script.add([choice({"skills": ["first.skill", "second.skill"]}),
                      choice({"nodes": [{"id": "a", "skill": "first.skill", "deps": []},
                                        {"id": "b", "skill": "second.skill", "deps": ["a"]}]}),
                      step(("builtin_output_set", {"key": "title", "value": "Spring launch", "sourceType": "USER"}),
                           ("builtin_output_set", {"key": "articleId", "value": "A-17", "sourceType": "USER"}),
                           ("builtin_node_finish", {"output": "found"})),
                      step(("t", {})),
                      step(("builtin_node_fail", {"reason": "stop"}))])
        await s.send("Rename article A-17 called Spring launch")
        return s

    return asyncio.run(scenario())


def test_inputs_are_bound_at_node_start_and_missing_ones_marked(tmp_path: Path) -> None:
    h = harness(tmp_path)
    s = run_two_nodes(h)
    node = s.env.task.nodes["b"]
    assert node.inputs == {"space": {"id": 3, "name": "Website"}, "articleId": "A-17", "title": "Spring launch"}
    assert node.input_sources == {"space": "SESSION", "articleId": "NODE_OUTPUT", "title": "NODE_OUTPUT"}
    system = h.step_requests()[1].messages[0]["content"]
    assert '- space = {"id": 3, "name": "Website"}' in system
    assert '- articleId = "A-17"' in system and '- title = "Spring launch"' in system
    assert "- region = MISSING (required)" in system
    assert "- tag = MISSING\n" in system  # not required: marked missing, without "(required)"
    # a missing input does not stop the node: it ran its call with the bound input
    assert h.gateway.calls == [("t", {"space": {"id": 3, "name": "Website"}})]


def test_outputs_are_projected_into_the_prompt(tmp_path: Path) -> None:
    h = harness(tmp_path)
    run_two_nodes(h)
    system = h.step_requests()[1].messages[0]["content"]
    assert "## Outputs to write with builtin_output_set" in system
    assert "- lines: LIST of sku, qty, at least 2 item(s), required, sources EVIDENCE — one per product" in system
    assert "- memo: VALUE — a short note" in system


def test_input_binding_fills_and_never_overwrites(tmp_path: Path) -> None:
    h = harness(tmp_path)
    module = h.compiled.skills["second.skill"]
    ctx = SimpleNamespace(platform={}, inputs={}, outputs={}, shared={"region": "EU", "tag": "new"},
                          session={"space": {"id": 3}}, prior=lambda *a: rt.MISSING,
                          upstream_output=lambda parts: "from-upstream")
    inputs: dict[str, Any] = {"region": "US", "space": ""}
    got = module.bind_inputs(inputs, ctx)
    assert inputs["region"] == "US"  # already had a value: kept
    assert inputs["space"] == {"id": 3}  # an empty string has no value (§5.3): filled
    assert inputs["tag"] == "new" and inputs["articleId"] == "from-upstream"
    assert "region" not in got and got["space"] == "SESSION" and got["tag"] == "SHARED"


def test_finish_refuses_a_required_output_whose_source_is_not_allowed(tmp_path: Path) -> None:
    h = harness(tmp_path)
    s = run_two_nodes(h)
    node = s.env.task.nodes["b"]
    node.outputs = {"lines": {"value": [{"sku": "X", "qty": 1}], "source": "USER", "ref": None}}
    assert finish_check(s.env, node, "done")[0] == "FINISH_OUTPUT_SOURCE"
    node.outputs["lines"]["source"] = "EVIDENCE"
    assert finish_check(s.env, node, "done") is None
    node.outputs["lines"]["value"] = []
    assert finish_check(s.env, node, "done")[0] == "FINISH_OUTPUT_MISSING"


def test_dangling_tool_calls_are_answered_after_a_crash() -> None:
    from skillc.runtime.loop.node import answer_dangling_calls

    messages = [
        {"role": "system", "content": "s"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {}},
                                                               {"id": "b", "type": "function", "function": {}}]},
        {"role": "tool", "tool_call_id": "a", "content": "{}"},
        {"role": "user", "content": "Did it work?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {}}]},
    ]
    answer_dangling_calls(messages)
    roles = [(m["role"], m.get("tool_call_id")) for m in messages]
    assert roles == [("system", None), ("assistant", None), ("tool", "a"), ("tool", "b"), ("user", None),
                     ("assistant", None), ("tool", "c")]
    assert "interrupted" in messages[3]["content"]
    answer_dangling_calls(messages)
    assert len(messages) == 7  # idempotent
