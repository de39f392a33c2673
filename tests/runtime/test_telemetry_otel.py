"""OpenTelemetry spans and metrics of a real scenario (a refusal, an approval, a write settled by
its verify tool) against the GenAI conventions; no sensitive value in any exported attribute;
traceparent carried in the MCP request's `_meta`; nothing of OpenTelemetry loaded when off."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import Context, MCPServer
from helpers.telemetry_scenario import run_async, SECRET, write_scenario
from opentelemetry import trace as ot
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from skillc.runtime import telemetry
from skillc.runtime.mcp.gateway import McpGateway
from skillc.scenario.runner import run_scenario


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("otel")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    telemetry.REGISTRY.reset()
    tel = telemetry.build(tracer_provider=provider, meter_provider=MeterProvider(metric_readers=[reader]))
    try:
        result = run_async(run_scenario(write_scenario(folder), trace_path=str(folder / "t.jsonl"), telemetry=tel))
        assert result.error is None and result.crash is None and not result.problems, result
        events = [json.loads(line) for line in (folder / "t.jsonl").read_text().splitlines()]
        yield {"spans": list(exporter.get_finished_spans()), "events": events,
               "prometheus": telemetry.render_prometheus(), "otel_metrics": reader.get_metrics_data()}
    finally:
        tel.close()
        telemetry.REGISTRY.reset()


def _parent(span: ReadableSpan, spans: list[ReadableSpan]) -> ReadableSpan | None:
    if span.parent is None:
        return None
    return next(s for s in spans if s.context.span_id == span.parent.span_id)


def _named(spans: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def test_span_tree(run: dict[str, Any]) -> None:
    spans = run["spans"]
    roots = [s for s in spans if s.parent is None]
    assert [r.name for r in roots] == ["invoke_workflow skillc.turn"] * 2  # one tree per turn
    assert all(r.attributes["gen_ai.conversation.id"] == "s1" for r in roots)
    for span in spans:  # every parent was exported, in the same trace as its child
        parent = _parent(span, spans)
        assert parent is None or parent.context.trace_id == span.context.trace_id
    plan = _named(spans, "plan")[0]
    assert plan.attributes["gen_ai.operation.name"] == "plan"
    assert plan.attributes["skillc.plan.via"] == "shortcut"
    workflows = _named(spans, "invoke_workflow editor")
    assert len(workflows) == 2 and {_parent(w, spans).name for w in workflows} == {"invoke_workflow skillc.turn"}
    assert {w.attributes["gen_ai.workflow.name"] for w in workflows} == {"editor"}
    agents = _named(spans, "invoke_agent editor")
    assert len(agents) == 2
    for agent in agents:
        assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
        assert agent.attributes["gen_ai.agent.name"] == "editor"
        assert agent.attributes["skillc.skill"] == "cms.article.lifecycle"
        assert _parent(agent, spans).name == "invoke_workflow editor"
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert len(chats) == 5 and all(s.attributes["gen_ai.operation.name"] == "chat" for s in chats)
    assert all(_parent(c, spans).name == "invoke_agent editor" for c in chats)
    tools = [s for s in spans if s.name.startswith("execute_tool ")]
    assert [s.name.split(" ", 1)[1] for s in sorted(tools, key=lambda s: s.start_time)] == [
        "cms_article_create", "cms_space_list", "cms_article_create", "builtin_node_approval",
        "cms_article_create", "cms_article_find", "builtin_node_finish"]
    for span in tools:
        tool = span.name.split(" ", 1)[1]
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["gen_ai.tool.name"] == tool
        assert span.attributes["gen_ai.conversation.id"] == "s1"
        assert _parent(span, spans).name == "invoke_agent editor"
        # every call the model made carries its call id (the runtime makes the confirmed write
        # and the verify call itself)
        if tool != "cms_article_find" and "skillc.approval.id" not in span.attributes:
            assert span.attributes["gen_ai.tool.call.id"].startswith("call_")
        reached = span.attributes.get("skillc.call.outcome") not in ("refused",) and not tool.startswith("builtin_")
        assert (span.attributes.get("mcp.method.name") == "tools/call") == reached


def test_refusal_approval_and_verify_attributes(run: dict[str, Any]) -> None:
    spans, events = run["spans"], run["events"]
    tools = sorted((s for s in spans if s.name.startswith("execute_tool ")), key=lambda s: s.start_time)
    refused = [s for s in tools if s.attributes.get("skillc.call.outcome") == "refused"]
    assert [s.attributes["skillc.refusal.code"] for s in refused] == ["PARAM_PROVENANCE_CALL_TOOL", "APPROVAL_REQUIRED"]
    for span in refused:
        assert span.attributes["error.type"] == span.attributes["skillc.refusal.code"]
        assert span.status.status_code is StatusCode.ERROR
    approval = next(e for e in events if e["type"] == "audit.approval" and e["decision"] == "CONFIRM")
    write = tools[4]
    assert write.attributes["skillc.approval.id"] == approval["approval"]
    assert write.attributes["skillc.approval.decision"] == "CONFIRM"
    assert write.attributes["error.type"] == "TOOL_TIMEOUT" and write.attributes["skillc.call.outcome"] == "uncertain"
    assert write.attributes["skillc.evidence.status"] == "UNKNOWN"
    assert len(write.attributes["skillc.idempotency_key.digest"]) == 32
    assert {k: v for k, v in write.attributes.items() if k.startswith("skillc.provenance.")} == {
        "skillc.provenance.title": "USER", "skillc.provenance.pin": "MODEL",
        "skillc.provenance.spaceId": "EVIDENCE", "skillc.provenance.authorId": "PLATFORM"}
    verify = tools[5]
    assert verify.attributes["skillc.settlement.via"] == "verify"
    assert verify.attributes["skillc.settlement.status"] == "SUCCESS"
    assert verify.attributes["skillc.settlement.evidence"] == write.attributes["skillc.evidence.id"]
    asked = next(s for s in spans if s.name == "invoke_agent editor" and s.attributes.get("skillc.node.suspended"))
    assert asked.attributes["skillc.node.suspended"] == "APPROVAL"
    assert asked.attributes["skillc.approval.decision"] == "REQUESTED"


def test_no_value_is_exported(run: dict[str, Any]) -> None:
    """Not the sensitive PIN, and no other argument value, message or question either."""
    exported = []
    for span in run["spans"]:
        exported.append(json.dumps(dict(span.attributes), default=str))
        exported.extend(json.dumps(dict(e.attributes), default=str) for e in span.events)
    text = "\n".join(exported)
    for value in (SECRET, "Spring launch", "Please create", "Website"):
        assert value not in text
    assert SECRET not in run["prometheus"]


def test_metrics(run: dict[str, Any]) -> None:
    text = run["prometheus"]
    for line in ('skillc_tool_calls_total{tool="cms_article_create",outcome="refused"} 2',
                 'skillc_tool_calls_total{tool="cms_article_create",outcome="uncertain"} 1',
                 'skillc_refusals_total{error="APPROVAL_REQUIRED",code="agent_runtime.42221"} 1',
                 "skillc_approvals_pending 0",
                 'skillc_approvals_decided_total{decision="CONFIRM"} 1',
                 'skillc_writes_settled_total{outcome="SUCCESS",route="verify"} 1',
                 "skillc_turn_duration_seconds_count 2",
                 'skillc_tool_call_duration_seconds_count{tool="cms_space_list"} 1'):
        assert line in text.splitlines(), line
    names = {m.name for rm in run["otel_metrics"].resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    # OpenTelemetry names: no unit, no _total (a Prometheus exporter adds them back)
    assert {"skillc.tool.calls", "skillc.refusals", "skillc.writes.settled", "skillc.turn.duration",
            "skillc.tool.call.duration", "gen_ai.client.operation.duration"} <= names


def test_traceparent_in_mcp_meta() -> None:
    server = MCPServer("meta")

    @server.tool()
    async def echo_meta(ctx: Context) -> dict[str, Any]:
        meta = ctx.request_context.meta
        return {"meta": meta.model_dump() if hasattr(meta, "model_dump") else dict(meta or {})}

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tel = telemetry.build(tracer_provider=provider)

    async def call() -> Any:
        async with McpGateway({"meta": server}) as gateway:
            gateway.call_hook = tel.tool_call  # what Telemetry.install sets on a runtime's gateway
            return await gateway.call("echo_meta", {})

    try:
        outcome = run_async(call())
    finally:
        tel.close()
        telemetry.REGISTRY.reset()
    spans = {s.name: s for s in exporter.get_finished_spans()}
    tool, client = spans["execute_tool echo_meta"], spans["tools/call echo_meta"]
    assert tool.kind is SpanKind.INTERNAL and client.kind is SpanKind.CLIENT
    assert client.parent.span_id == tool.context.span_id and client.attributes["mcp.method.name"] == "tools/call"
    traceparent = outcome.response["meta"]["traceparent"]
    ctx = client.context
    assert traceparent.startswith(f"00-{ctx.trace_id:032x}-")  # the server continues this trace
    if not isinstance(ot.get_tracer_provider(), TracerProvider):
        # no global provider: the SDK's own client span records nothing, the request carries ours
        # (with one, the SDK's span is a child of ours and the request carries that child's id)
        assert traceparent == f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


def test_off_loads_no_opentelemetry(tmp_path: Path) -> None:
    code = ("import sys\nfrom skillc.runtime.telemetry.trace import TraceWriter\nw = TraceWriter()\n"
            "w.emit({'type': 'turn.started', 'message': 'm'}, session='s', turn=1)\n"
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "SKILLC_TELEMETRY"))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"
    env["SKILLC_TELEMETRY"] = "metrics"  # metrics only: still no OpenTelemetry
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"
