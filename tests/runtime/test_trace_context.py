"""Per-session trace context: concurrent sessions in one Runtime never mix their events, and the
hash chain of each session verifies on its own."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from helpers.telemetry_scenario import run_async

from skillc.compiler.build import compile_studio
from skillc.compiler.sources import studio_from_mapping
from skillc.runtime.outside.config import Settings
from skillc.runtime.compiled.loader import load_compiled
from skillc.runtime.mcp.gateway import InProcessServer, McpGateway
from skillc.runtime.model.base import ModelRequest, ModelResponse, ToolCall
from skillc.runtime.session import Runtime
from skillc.runtime.store import Store
from skillc.runtime.telemetry.audit import verify
from skillc.runtime.telemetry.trace import TraceWriter, current_env, iter_events
from skillc.scenario.canned import build_canned_server

CONTRACT = """{"tools": {"cms_article_get": {
  "args": {"articleId": {"sources": ["USER", "EVIDENCE"], "label": "Article"}},
  "success": {"path": "code", "op": "EQ", "value": 200}}}}"""
STUDIO = {
    "agents": [{"agent_code": "reader", "agent_name": "Reader", "identity_desc": "Reads", "mission_desc": "Reads",
                "boundary_desc": "", "style_desc": "", "principle_desc": "", "status": "ACTIVE",
                "skills": ["cms.read"]}],
    "skills": [{"skill_key": "cms.read", "skill_name": "Reader", "semantic_desc": "Reads articles",
                "skill_manual": "Read.", "status": "ACTIVE", "tools": ["cms_article_get"], "contract": CONTRACT}],
}
TOOLS = [{"name": "cms_article_get",
          "input_schema": {"type": "object", "properties": {"articleId": {"type": "integer"}}},
          "responses": [{"json": {"code": 200, "data": {"id": 17}}}]}]
CALLS = 3  # the fingerprint limit: a 4th identical read would fail the node


class PerSessionModel:
    """Stateless: each session's node makes CALLS reads of the article its user named, then
    finishes; the argument (the session's number) ties every invocation to its session."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        user = next(m["content"] for m in request.messages if m["role"] == "user" and "article" in m["content"])
        article = int(user.rsplit(" ", 1)[1])
        done = sum(1 for m in request.messages if m["role"] == "tool")
        await asyncio.sleep(0)  # let the other sessions interleave
        if done < CALLS:
            return ModelResponse(tool_calls=[ToolCall(f"c{done}", "cms_article_get", json.dumps({"articleId": article}))])
        return ModelResponse(tool_calls=[ToolCall("f", "builtin_node_finish", json.dumps({"output": "read"}))])


async def _run(tmp: Path, sessions: int, tel: Any = None) -> tuple[list[dict[str, Any]], dict[str, int]]:
    compile_studio(studio_from_mapping(STUDIO, origin="test"), tmp / "c")
    server = build_canned_server(TOOLS, on_invoked=lambda t, a: None, on_crash=lambda: None)
    # the runtime's own MCP client reports invocations (as for a real server)
    gateway = McpGateway({"mem": InProcessServer(server.target, reports_invocations=False)}, timeout=10,
                         on_invoked=None)
    await gateway.start()
    trace = TraceWriter(str(tmp / "trace.jsonl"), keep=True)
    runtime = Runtime(load_compiled(tmp / "c"), gateway, PerSessionModel(), Store(tmp / "s.sqlite"), Settings(),
                      trace=trace, seed=3, strict=True)
    if tel is not None:
        tel.install(runtime)
    numbers: dict[str, int] = {}

    async def one(i: int) -> None:
        s = await runtime.open_session({"userId": i}, session_id=f"s{i}")
        numbers[s.id] = 1000 + i
        reply = await s.send(f"read article {1000 + i}")
        assert reply.text == "read"
        assert current_env() is s.env  # this task's context names its own session

    try:
        await asyncio.gather(*(one(i) for i in range(sessions)))
    finally:
        await gateway.aclose()
        trace.close()
    return trace.events, numbers


def test_concurrent_sessions_never_mix(tmp_path: Path) -> None:
    sessions = 12
    events, numbers = run_async(_run(tmp_path, sessions))
    invoked = [e for e in events if e["type"] == "mcp.invoked"]
    assert len(invoked) == sessions * CALLS
    wrong = [e for e in invoked if e["args"]["articleId"] != numbers[e["session"]]]
    assert not wrong, f"{len(wrong)} of {len(invoked)} mcp.invoked events name the wrong session"
    calls = [e for e in events if e["type"] == "tool.call" and not e["builtin"]]
    assert all(e["args"]["articleId"] == numbers[e["session"]] for e in calls)
    # the sessions really interleaved: some session's events sit between another's
    order = [e["session"] for e in events]
    assert any(a != b for a, b in zip(order, order[1:])) and order != sorted(order)
    # every session's chain holds in the interleaved file
    verdict = verify(iter_events(str(tmp_path / "trace.jsonl")))
    assert verdict.ok, verdict.problem
    assert verdict.sessions == sessions


def test_concurrent_sessions_keep_their_own_span_trees(tmp_path: Path) -> None:
    """With telemetry on, every span of a session sits in that session's turn tree."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from skillc.runtime import telemetry

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tel = telemetry.build(tracer_provider=provider)
    try:
        run_async(_run(tmp_path, 6, tel))
    finally:
        tel.close()
        telemetry.REGISTRY.reset()
    spans = exporter.get_finished_spans()
    roots = {s.context.trace_id: s for s in spans if s.parent is None}
    assert len(roots) == 6
    tools = [s for s in spans if s.name == "execute_tool cms_article_get"]
    assert len(tools) == 6 * CALLS
    for span in spans:
        attrs = span.attributes or {}
        root_attrs = roots[span.context.trace_id].attributes or {}
        if "gen_ai.conversation.id" in attrs:
            assert attrs["gen_ai.conversation.id"] == root_attrs["gen_ai.conversation.id"], span.name
