"""A resume needs no new message (the README's Serving walkthrough sends none), and a run whose
model cannot answer does not end as a success."""
from __future__ import annotations

import json
from typing import Any

from serve_harness import Client, Stream


def call(name: str, **args: Any) -> dict[str, Any]:
    """A canned model step calling one tool."""
    return {"tool_calls": [{"name": name, "arguments": args}]}


def approval_script(title: str) -> list[dict[str, Any]]:
    """Route, look up the space, try the write (gated), ask for approval: the README's script."""
    return [{"answer": {"agent": "editor"}}, call("cms_space_list"), call("cms_article_create", title=title, spaceId=3),
            call("builtin_node_approval", summary=f"Create {title}", toolName="cms_article_create")]


def post(client: Client, body: dict[str, Any]) -> Stream:
    """POST /agui with exactly this body (no `messages` added) and read the stream, validated."""
    return client.post_run(json.dumps(body).encode())


def test_a_resume_without_messages_is_answered(alice: Client, model: Any) -> None:
    model.add(*approval_script("Resume only"))
    first = alice.run("resume-only", "ro-1", "Please create an article titled Resume only")
    interrupt = first.interrupt
    model.add(call("builtin_node_finish", output="Created it"))
    done = post(alice, {"threadId": "resume-only", "runId": "ro-2", "resume": [
        {"interruptId": interrupt["id"], "status": "resolved",
         "payload": {"decision": "CONFIRM", "digest": interrupt["metadata"]["digest"]}}]})
    assert done.status == 200, done.error
    assert done.outcome == {"type": "success"} and done.reply == "Created it"


def test_a_model_that_cannot_answer_ends_the_run_in_error(alice: Client, model: Any) -> None:
    model.add(*approval_script("Runs out"))
    first = alice.run("runs-out", "out-1", "Please create an article titled Runs out")
    interrupt = first.interrupt
    # no canned answer left for the step after the approved write: the model fails
    out = post(alice, {"threadId": "runs-out", "runId": "out-2", "resume": [
        {"interruptId": interrupt["id"], "status": "resolved",
         "payload": {"decision": "CONFIRM", "digest": interrupt["metadata"]["digest"]}}]})
    assert out.status == 200
    end = out.events[-1]
    assert end["type"] == "RUN_ERROR" and end["code"] == "MODEL_ERROR", end
    # the end user is told in a sentence and given a reference; the upstream's answer is logged only
    assert "no canned response left" not in end["message"] and end["metadata"]["reference"] in end["message"]
    assert not out.of("RUN_FINISHED")
    assert out.of("CUSTOM", "skillc.write_settled")[0]["value"]["status"] == "SUCCESS"  # the write itself went through
    state = alice.request("GET", "/api/sessions/runs-out/state").json()
    assert state["active_task"]["state"] == "RUNNING"  # still open: the next message continues it
