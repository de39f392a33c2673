"""A served run asks the store once whether another worker changed the session, not once per
check on the way (each ask is a round trip on the store's thread, on the way to the run)."""
from __future__ import annotations

import json
from typing import Any

import pytest

from serve_harness import Client


def call(name: str, **args: Any) -> dict[str, Any]:
    """A canned model step calling one tool."""
    return {"tool_calls": [{"name": name, "arguments": args}]}


def test_a_run_asks_for_the_sessions_version_at_most_once(served: Any, alice: Client, model: Any,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    store = served.app.state.ctx.runtime.store
    asked: list[str] = []
    real = store.version_of

    def version_of(session: str) -> int:
        asked.append(session)
        return int(real(session))

    monkeypatch.setattr(store, "version_of", version_of)
    model.add({"answer": {"agent": "editor"}}, call("builtin_node_follow_up", question="Which title?",
                                                    expectedFields=["title"]))
    first = alice.run("asks-once", "asks-1", "Create an article")
    assert first.status == 200 and first.interrupt
    # a session opened from the store for this run is current: nothing more to ask
    assert asked.count("asks-once") == 0, asked
    # no new message while a question is pending: the same question again (no model step)
    second = alice.post_run(json.dumps({"threadId": "asks-once", "runId": "asks-2"}).encode())
    assert second.status == 200 and second.interrupt
    # the live session is compared with the store once (another worker may have run a turn)
    assert asked.count("asks-once") == 1, asked
