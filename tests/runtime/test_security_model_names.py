"""Findings 7 and 10: names the model invents. A tool name with a lone surrogate ended the served
turn with an internal error (its trace line could not be written); every invented name became a
/metrics label (19 lines a name, model-written text on an endpoint without identity). Now such a
call is refused like any unknown tool and is counted under `tool="other"`."""
from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillc.runtime import telemetry
from skillc.runtime.model.base import ModelRequest, ModelResponse, ToolCall

from helpers.asgi_app import broken, ALICE, serving
from helpers.node_harness import PLATFORM, Harness, agent, skill, step

READ = """{ "tools": { "page_get": { "args": { "slug": { "sources": ["MODEL"] } } } } }"""


@pytest.fixture(autouse=True)
def _metrics_clean() -> Iterator[None]:
    telemetry.REGISTRY.reset()
    yield
    telemetry.REGISTRY.reset()


def test_a_lone_surrogate_tool_name_is_a_refused_call_in_process(tmp_path: Path) -> None:
    from skillc.runtime.telemetry.trace import TraceWriter

    h = Harness(tmp_path, {"agents": [agent("a", ["p.read"])], "skills": [skill("p.read", ["page_get"], READ)]},
                {"page_get": {"responses": [{"code": 0}]}})
    h.runtime.trace = TraceWriter(str(tmp_path / "trace.jsonl"), keep=True)

    async def scenario() -> None:
        s = await h.runtime.open_session(PLATFORM, session_id="s1")
        h.script.add([step(("page_get\ud800", {"slug": "home"})), step(("page_get", {"slug": "home"})),
                      step(("builtin_node_finish", {"output": "done"}))])
        reply = await s.send("Get the home page")
        assert reply.text == "done", reply.text
    asyncio.run(scenario())
    calls = [e for e in h.runtime.trace.events if e["type"] == "tool.call"]
    assert calls[0]["error"] == "CATALOG_DENIED" and calls[0]["tool"] == "page_get\ufffd"
    assert h.gateway.calls == [("page_get", {"slug": "home"})] and not [e for e in h.runtime.trace.events if e["type"] == "error"]
    (tmp_path / "trace.jsonl").read_text(encoding="utf-8")  # written whole, valid UTF-8


class Inventor:
    """A model that routes nowhere special and calls tools it makes up, one per step, then finishes."""

    def __init__(self, names: list[str]) -> None:
        self.names = list(names)

    def __call__(self, request: ModelRequest) -> ModelResponse:
        if request.purpose != "step":
            return ModelResponse(choice={"agent": "editor", "skills": ["cms.article.find"], "intent": "x"})
        if self.names:
            name = self.names.pop(0)
            return ModelResponse(tool_calls=[ToolCall(id="c1", name=name, arguments="{}")])
        return ModelResponse(tool_calls=[ToolCall(id="c2", name="builtin_node_fail",
                                                  arguments=json.dumps({"reason": "made up"}))])


def test_invented_tool_names_never_become_metric_labels(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from skillc.compiler.build import compile_studio

    compiled = tmp_path / "compiled"
    compile_studio(Path(__file__).resolve().parents[2] / "examples" / "studio", compiled)
    invented = [f"made_up_{n}_<script>" for n in range(12)] + ["evil\ud800name"]

    async def scenario() -> str:
        async with serving(tmp_path, compiled, responder=Inventor(invented),
                           extra="") as app:
            body = json.dumps({"threadId": "inv", "runId": "inv-1",
                               "messages": [{"id": "m1", "role": "user", "content": "find my article"}]}).encode()
            run = await app.post(ALICE, "/agui", body)
            assert run.status == 200 and b"INTERNAL" not in run.body, run.body[-400:]
            metrics = await app.call("GET", "/metrics")
            assert metrics.status == 200
            return metrics.body.decode()
    text = asyncio.run(scenario())
    assert "made_up" not in text and "script" not in text and "evil" not in text
    assert 'tool="other"' in text
    assert not [r for r in caplog.records if broken(r)], [r.getMessage() for r in caplog.records]
