"""`forwardedProps.agent` over AG-UI: the run's task goes to the picked agent without routing; an
agent the studio does not have is refused before the stream starts."""
from __future__ import annotations

import json
from typing import Any

from serve_harness import Client, Stream


def run_with_props(client: Client, thread: str, run_id: str, text: str, props: Any) -> Stream:
    """POST /agui with `forwardedProps` and read the whole stream (validated when it is 200)."""
    body = json.loads(client.run_body(thread, run_id, text))
    body["forwardedProps"] = props
    return client.post_run(json.dumps(body).encode())


def test_the_picked_agent_is_used_without_routing(alice: Client, model: Any) -> None:
    # no routing answer is canned: a run that asked the model to route would use up the follow-up
    model.add({"tool_calls": [{"name": "builtin_node_follow_up",
                               "arguments": {"question": "Which title?", "expectedFields": ["title"]}}]})
    first = run_with_props(alice, "pick", "pick-1", "Create an article please", {"agent": "editor"})
    assert first.status == 200 and first.interrupt["message"] == "Which title?"
    routed = [e for e in alice.trace("pick") if e["type"] == "agent.routed"]
    assert [(e["agent"], e["via"]) for e in routed] == [("editor", "user")]


def test_an_unknown_or_malformed_agent_is_refused(alice: Client) -> None:
    unknown = run_with_props(alice, "pick-x", "pick-x-1", "hello", {"agent": "nobody"})
    assert (unknown.status, unknown.error["code"]) == (422, "UNKNOWN_AGENT")
    assert "'nobody'" in unknown.error["message"] and "editor" in unknown.error["message"]
    malformed = run_with_props(alice, "pick-x", "pick-x-2", "hello", {"agent": 3})
    assert (malformed.status, malformed.error["code"]) == (422, "INVALID_INPUT")
