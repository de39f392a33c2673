"""What a node's model is offered (§1.3, §12): builtins offered only when they apply, the skill's
business tools with their MCP schemas, and the observations it gets back from builtins.

Driven through the runtime API (Session.send / answer) with the ModelDouble recording every request.
"""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from helpers.node_harness import Harness, agent, choice, skill, step, tool_names

ALWAYS = ["builtin_node_follow_up", "builtin_node_finish", "builtin_node_fail", "builtin_state_set",
          "builtin_evidence_get", "builtin_session_info", "builtin_env_current_datetime", "builtin_env_generate_uuid",
          "builtin_env_format_datetime", "builtin_env_add_datetime", "builtin_env_diff_datetime",
          "builtin_env_get_weekday", "builtin_env_random_int", "builtin_env_hash"]

PUBLISH = """{
  "target": "page_publish",
  "tools": {
    "page_get": { "label": "Reading the page", "args": { "slug": { "sources": ["USER"], "label": "Page" } },
                  "success": { "path": "code", "op": "EQ", "value": 0 } },
    "page_publish": { "sideEffect": "WRITE", "args": { "slug": { "sources": ["USER"], "label": "Page" } },
                      "success": { "path": "code", "op": "EQ", "value": 0 } }
  }
}"""
PAGE_TOOLS = {
    "page_get": {"title": "Get page", "input_schema": {"type": "object", "properties": {"slug": {"type": "string"}}},
                 "responses": [{"code": 0, "data": {"slug": "home", "title": "Home"}}]},
    "page_publish": {"responses": [{"code": 0}]},
    "page_delete": {"responses": [{"code": 0}]},  # in the catalog, not in toolNames
}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def publish_harness(tmp_path: Path, config: dict[str, Any] | None = None) -> Harness:
    studio = {"agents": [agent("editor", ["page.publish"])],
              "skills": [skill("page.publish", ["page_get", "page_publish", "page_untracked"], PUBLISH)]}
    tools = dict(PAGE_TOOLS, page_untracked={"description": "No contract", "responses": [{"code": 0}]})
    return Harness(tmp_path, studio, tools, config=config)


def test_approval_is_offered_only_while_a_call_is_gated(tmp_path: Path) -> None:
    h = publish_harness(tmp_path)

    async def scenario() -> None:
        s = await h.session()
        h.script.add([step(("page_get", {"slug": "home"})),
                      step(("page_publish", {"slug": "home"})),
                      step(("builtin_state_set", {"key": "k", "value": 1})),
                      step(("builtin_node_approval", {"summary": "Publish home", "toolName": "page_publish"}))])
        reply = await s.send("Publish home")
        assert reply.suspended and reply.kind == "APPROVAL"
        h.script.add([step(("builtin_node_finish", {"output": "Published home"}))])
        reply = await s.answer({"decision": "CONFIRM"})
        assert not reply.suspended and reply.text == "Published home"

    run(scenario())
    offered = [("builtin_node_approval" in tool_names(r)) for r in h.step_requests()]
    # before the write; after APPROVAL_REQUIRED (twice: still gated while the model does something
    # else); after the confirmed write ran
    assert offered == [False, False, True, True, False]


def test_business_tools_are_the_tool_names_with_their_schemas(tmp_path: Path) -> None:
    h = publish_harness(tmp_path)

    async def scenario() -> None:
        s = await h.session()
        h.script.add([step(("builtin_node_fail", {"reason": "stop"}))])
        await s.send("Publish home")

    run(scenario())
    request = h.step_requests()[0]
    names = tool_names(request)
    # §1.3: every builtin that applies, then toolNames in order; page_delete is not offered
    assert names == ALWAYS[:1] + ALWAYS[1:3] + ALWAYS[3:] + ["page_get", "page_publish", "page_untracked"]
    specs = {t.name: t for t in request.tools}
    assert specs["page_get"].parameters == PAGE_TOOLS["page_get"]["input_schema"]
    assert specs["page_get"].description == "Reading the page"  # §4 label first
    assert specs["page_publish"].description == "page_publish"  # no label, no MCP title/description
    assert specs["page_untracked"].description == "No contract"
    # §1.3: the prompt's catalog lists only contract-configured tools
    system = request.messages[0]["content"]
    assert "`page_get` (Reading the page)" in system and "`page_publish`" in system
    assert "page_untracked" not in system and "page_delete" not in system


def test_a_business_call_pushes_its_label_as_progress(tmp_path: Path) -> None:
    h = publish_harness(tmp_path, config={"state.write-confirm-bypass-tools": []})

    async def scenario() -> None:
        s = await h.session()
        h.script.add([step(("page_get", {"slug": "home"}), ("page_untracked", {}), ("builtin_state_set",
                                                                                    {"key": "a", "value": 1})),
                      step(("builtin_node_fail", {"reason": "stop"}))])
        await s.send("Publish home")

    run(scenario())
    assert h.progress[0] == ("page_get", "Reading the page")
    assert [t for t, _ in h.progress] == ["page_get", "page_untracked"]  # builtins push nothing


LOOKUP = """{ "delegatable": true,
  "tools": { "space_list": { "success": { "path": "code", "op": "EQ", "value": 0 },
                             "extracts": [ { "key": "spaces", "path": "data" } ] } } }"""
TAGGING = """{ "tools": { "tag_add": { "args": { "tag": { "sources": ["USER"] } } } } }"""


def delegate_harness(tmp_path: Path, skills: list[str], config: dict[str, Any] | None = None) -> Harness:
    all_skills = {"cms.tagging": skill("cms.tagging", ["tag_add"], TAGGING),
                  "space.lookup": skill("space.lookup", ["space_list"], LOOKUP),
                  "org.lookup": skill("org.lookup", ["space_list"], LOOKUP)}
    studio = {"agents": [agent("tagger", skills)], "skills": [all_skills[k] for k in skills]}
    tools = {"tag_add": {"responses": [{"code": 0}]}, "space_list": {"responses": [{"code": 0, "data": [{"id": 3}]}]}}
    return Harness(tmp_path, studio, tools, config=config)


def _first_node_tools(h: Harness, *, intent: bool) -> list[str]:
    async def scenario() -> None:
        s = await h.session()
        h.script.add(([choice({"skills": ["cms.tagging"]})] if intent else [])
                     + [step(("builtin_node_fail", {"reason": "stop"}))])
        await s.send("Tag it")

    run(scenario())
    return tool_names(h.step_requests()[0])


def test_delegate_is_offered_only_when_a_skill_is_delegable(tmp_path: Path) -> None:
    assert "builtin_node_delegate" not in _first_node_tools(delegate_harness(tmp_path / "a", ["cms.tagging"]),
                                                            intent=False)
    assert "builtin_node_delegate" in _first_node_tools(
        delegate_harness(tmp_path / "b", ["cms.tagging", "space.lookup"]), intent=True)


def test_delegate_is_not_offered_at_the_depth_limit(tmp_path: Path) -> None:
    h = delegate_harness(tmp_path, ["cms.tagging", "space.lookup"], config={"state.delegate-max-depth": 0})
    assert "builtin_node_delegate" not in _first_node_tools(h, intent=True)


def test_a_delegate_node_is_offered_delegate_only_below_the_limit(tmp_path: Path) -> None:
    def delegate_tools(h: Harness) -> list[list[str]]:
        async def scenario() -> None:
            s = await h.session()
            h.script.add([choice({"skills": ["cms.tagging"]}),
                          step(("builtin_node_delegate", {"skillKey": "space.lookup", "objective": "spaces"})),
                          step(("builtin_node_fail", {"reason": "stop"})),  # the delegate
                          step(("builtin_node_fail", {"reason": "stop"}))])  # the delegator
            await s.send("Tag it")

        run(scenario())
        return [tool_names(r) for r in h.step_requests()]

    skills = ["cms.tagging", "space.lookup", "org.lookup"]
    deep = delegate_tools(delegate_harness(tmp_path / "a", skills, config={"state.delegate-max-depth": 2}))
    assert "builtin_node_delegate" in deep[1]  # depth 1 < 2, org.lookup is delegable
    assert "builtin_node_delegate" in deep[2]  # the delegator goes on with delegation offered
    shallow = delegate_tools(delegate_harness(tmp_path / "b", skills, config={"state.delegate-max-depth": 1}))
    assert "builtin_node_delegate" in shallow[0]
    assert "builtin_node_delegate" not in shallow[1]  # depth 1 = the limit


def _output_set_offered(tmp_path: Path, contract: str, *, dependant: bool = False) -> bool:
    skills = [skill("a.skill", ["t"], contract), skill("b.skill", ["t"], "{}")]
    studio = {"agents": [agent("ag", ["a.skill", "b.skill"])], "skills": skills}
    h = Harness(tmp_path, studio, {"t": {"responses": [{"code": 0}]}})

    async def scenario() -> None:
        s = await h.session()
        nodes = [{"id": "a", "skill": "a.skill", "deps": []}]
        if dependant:
            nodes.append({"id": "b", "skill": "b.skill", "deps": ["a"]})
        h.script.add([choice({"skills": ["a.skill", "b.skill"]}), choice({"nodes": nodes}),
                      step(("builtin_node_fail", {"reason": "stop"}))])
        await s.send("Go")

    run(scenario())
    return "builtin_output_set" in tool_names(h.step_requests()[0])


def test_output_set_is_offered_only_when_outputs_are_used(tmp_path: Path) -> None:
    # §12: not offered when no node depends on this one and no contract output is required,
    # shared or an entity
    assert not _output_set_offered(tmp_path / "1", "{}")
    assert not _output_set_offered(tmp_path / "2", '{ "outputs": { "x": { "required": false } } }')
    assert _output_set_offered(tmp_path / "3", '{ "outputs": { "x": { } } }')  # required by default
    assert _output_set_offered(tmp_path / "4", '{ "outputs": { "x": { "required": false, "share": "TASK" } } }')
    assert _output_set_offered(tmp_path / "5", '{ "outputs": { "x": { "required": false, "share": "SESSION" } } }')
    assert _output_set_offered(tmp_path / "6",
                               '{ "outputs": { "x": { "required": false, "entity": { "type": "thing" } } } }')
    assert _output_set_offered(tmp_path / "7", "{}", dependant=True)


def _tool_messages(request: Any) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in request.messages if m["role"] == "tool"]


def test_builtin_observations_carry_their_data(tmp_path: Path) -> None:
    h = publish_harness(tmp_path)

    async def scenario() -> None:
        s = await h.session()
        h.script.add([step(("page_get", {"slug": "home"})),
                      step(("builtin_evidence_get", {"evidenceId": "e1"}), ("builtin_session_info", {}),
                           ("builtin_env_current_datetime", {}), ("builtin_state_set", {"key": "_x", "value": 1})),
                      step(("builtin_node_fail", {"reason": "stop"}))])
        await s.send("Publish home")

    run(scenario())
    observations = _tool_messages(h.step_requests()[2])
    lookup, evidence, info, now, reserved = observations
    assert lookup["ok"] and lookup["evidence"] == "e1"
    assert evidence["data"]["response"] == {"code": 0, "data": {"slug": "home", "title": "Home"}}
    assert evidence["data"]["tool"] == "page_get" and evidence["data"]["status"] == "SUCCESS"
    assert info["data"] == {"sessionId": "s1", "taskId": "t1", "nodeId": "n1", "nodeState": "RUNNING"}
    assert "2027-01-01" in json.dumps(now["data"])  # the injected clock
    # a refusal: compact JSON with name, code, message and the next-step hint
    assert reserved["ok"] is False and reserved["name"] == "STATE_KEY_RESERVED"
    assert reserved["code"] == "agent_runtime.40028" and reserved["message"] and reserved["next"]


def test_a_text_only_step_is_answered_with_a_request_for_a_tool_call(tmp_path: Path) -> None:
    h = publish_harness(tmp_path)

    async def scenario() -> None:
        s = await h.session()
        h.script.add([step(text="I think the page is home."), step(("builtin_node_fail", {"reason": "stop"}))])
        await s.send("Publish home")

    run(scenario())
    second = h.step_requests()[1].messages
    assert second[-2] == {"role": "assistant", "content": "I think the page is home."}
    assert second[-1]["role"] == "user" and "builtin_node_finish" in second[-1]["content"]


def test_several_calls_of_one_step_run_in_order_and_stop_at_a_suspension(tmp_path: Path) -> None:
    h = publish_harness(tmp_path)

    async def scenario() -> None:
        s = await h.session()
        h.script.add([step(("page_get", {"slug": "home"}),
                           ("builtin_node_follow_up", {"question": "Which page?", "expectedFields": ["slug"]}),
                           ("page_get", {"slug": "home"}))])
        reply = await s.send("Publish home")
        assert reply.suspended and reply.kind == "FOLLOW_UP" and reply.text == "Which page?"

    run(scenario())
    assert [t for t, _ in h.gateway.calls] == ["page_get"]  # the call after the suspension did not run
