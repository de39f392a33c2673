"""Skills from a studio service: a skill changed between two turns is used at the second (and only
it is recompiled); a studio outage keeps the last good studio serving, and says so."""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillc.commands.studio import make_app
from skillc.model_stub import FakeOpenAIServer

from serve_harness import ALICE, ROOT, SECRET, Client, ServerThread, write_config

LIFECYCLE = "cms.article.lifecycle"


def call(name: str, **args: Any) -> dict[str, Any]:
    """A canned model step calling one tool."""
    return {"tool_calls": [{"name": name, "arguments": args}]}


@pytest.fixture
def stack(tmp_path: Path, fake_model: FakeOpenAIServer) -> Iterator[dict[str, Any]]:
    """A studio service over a copy of the example studio, and a runtime service loading from it."""
    studio_dir = tmp_path / "studio"
    shutil.copytree(ROOT / "examples" / "studio", studio_dir)
    studio = ServerThread(make_app(studio_dir)).__enter__()
    from skillc.compile_on_load import compile_on_load
    from skillc.runtime.server import create_app

    config = write_config(tmp_path, studio.url, fake_model.url)
    config.write_text(config.read_text(encoding="utf-8").replace("source =", "url =", 1), encoding="utf-8")
    app = create_app(config_path=config, compiler=compile_on_load)  # `[studio] url`
    runtime = ServerThread(app).__enter__()
    client = Client(runtime.url, SECRET, ALICE)
    try:
        yield {"studio_dir": studio_dir, "studio": studio, "runtime": runtime, "client": client,
               "feed": app.state.ctx.feed}
    finally:
        client.close()
        runtime.stop()
        studio.stop()


def look_up_spaces(fake: FakeOpenAIServer, client: Client, thread: str, run_id: str) -> Any:
    """One turn that calls the space lookup (its progress label comes from the contract)."""
    fake.add({"answer": {"agent": "editor"}}, call("cms_space_list"),
             call("builtin_node_follow_up", question="Which title?", expectedFields=["title"]))
    stream = client.run(thread, run_id, "Create an article")
    assert stream.status == 200, stream.error
    assert fake.remaining == 0
    return stream


def test_a_changed_skill_is_used_at_the_next_turn_and_an_outage_keeps_the_last_good(
        stack: dict[str, Any], fake_model: FakeOpenAIServer) -> None:
    client, feed = stack["client"], stack["feed"]
    studio_url = stack["studio"].url
    first = look_up_spaces(fake_model, client, "st1", "st-1")
    assert [e["value"]["label"] for e in first.of("CUSTOM", "skillc.progress")] == ["Looking up spaces"]
    version = feed.version
    unchanged = dict(feed.skills)
    etag = httpx.get(studio_url + "/studio").headers["etag"]
    assert httpx.get(studio_url + "/studio", headers={"If-None-Match": etag}).status_code == 304

    contract = stack["studio_dir"] / "skills" / LIFECYCLE / "contract.jsonc"
    contract.write_text(contract.read_text(encoding="utf-8").replace('"Looking up spaces"', '"Finding your spaces"'),
                        encoding="utf-8")
    second = look_up_spaces(fake_model, client, "st2", "st-2")
    assert [e["value"]["label"] for e in second.of("CUSTOM", "skillc.progress")] == ["Finding your spaces"]
    assert feed.version != version and not second.of("CUSTOM", "skillc.studio_stale")
    # only the changed skill was re-imported (its compiled module is new; the others are the same objects)
    assert feed.skills[LIFECYCLE] is not unchanged[LIFECYCLE]
    assert all(feed.skills[k] is m for k, m in unchanged.items() if k != LIFECYCLE)

    stack["studio"].stop()  # the studio service goes away
    third = look_up_spaces(fake_model, client, "st3", "st-3")
    assert [e["value"]["label"] for e in third.of("CUSTOM", "skillc.progress")] == ["Finding your spaces"]
    stale = third.of("CUSTOM", "skillc.studio_stale")
    assert len(stale) == 1 and studio_url in stale[0]["value"]["error"]
    assert [e["type"] for e in client.trace("st3")][0] == "studio.stale"
    ready = httpx.get(stack["runtime"].url + "/readyz")
    assert ready.status_code == 200 and ready.json()["studio"]["stale"] is True
