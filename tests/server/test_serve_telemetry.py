"""`skillc serve` with OpenTelemetry set up by the application before `create_app` (the SDK's
in-memory exporter and metric reader): the application's providers are used, a caller's
`traceparent` continues its trace, a recorded OpenAI response's token usage reaches the chat span
and the GenAI metrics, and every GenAI span of a whole approval round trip passes the
conventions checker (pytest-genai-semconv) and the convention's attribute names."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as GA
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics as GM
from opentelemetry.semconv.attributes import error_attributes, server_attributes
from opentelemetry.trace import SpanKind
from pytest_genai_semconv import assert_genai_span_compliant

from skillc.runtime import telemetry
from skillc.runtime.server import create_app

from serve_harness import ALICE, SECRET, Client, ServerThread, write_config

RECORDED = json.loads((Path(__file__).parents[1] / "fixtures" / "openai" / "chat_completion_tool_call.json")
                      .read_text(encoding="utf-8"))
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
ROUTE = {"answer": {"agent": "editor"}}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args}]}


@pytest.fixture(scope="module")
def observed(compiled: Path, fake_model: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """An approval round trip served by an app whose telemetry the application set up first."""
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tel = telemetry.build(tracer_provider=provider, meter_provider=MeterProvider(metric_readers=[reader]))
    try:
        tmp = tmp_path_factory.mktemp("otel-served")
        app = create_app(config_path=write_config(tmp, str(compiled), fake_model.url), telemetry=tel)
        with ServerThread(app) as server:
            client = Client(server.url, SECRET, ALICE)
            fake_model.add(ROUTE, {"json": RECORDED}, call("cms_article_create", title="Otel launch", spaceId=3),
                           call("builtin_node_approval", summary="Create Otel launch", toolName="cms_article_create"))
            first = client.run("otel", "otel-1", "Please create an article titled Otel launch",
                               headers={"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"})
            interrupt = first.interrupt
            fake_model.add(call("builtin_node_finish", output="Created article 17"))
            done = client.run("otel", "otel-2", resume=[{"interruptId": interrupt["id"], "status": "resolved",
                                                        "payload": {"decision": "CONFIRM",
                                                                    "digest": interrupt["metadata"]["digest"]}}])
            assert done.outcome == {"type": "success"}, done.events[-1]
            client.close()
        yield {"spans": list(exporter.get_finished_spans()), "metrics": reader.get_metrics_data(),
               "port": int(fake_model.url.rsplit(":", 1)[1].split("/")[0])}
    finally:
        tel.close()


def _turns(spans: list[ReadableSpan]) -> list[ReadableSpan]:
    return sorted((s for s in spans if s.attributes.get("skillc.turn") is not None), key=lambda s: s.start_time)


def test_the_applications_providers_are_used(observed: dict[str, Any]) -> None:
    assert len(_turns(observed["spans"])) == 2


def test_a_callers_traceparent_continues_its_trace(observed: dict[str, Any]) -> None:
    first, second = _turns(observed["spans"])
    assert f"{first.context.trace_id:032x}" == CALLER_TRACE
    assert first.parent is not None and f"{first.parent.span_id:016x}" == CALLER_SPAN and first.parent.is_remote
    assert second.parent is None and second.context.trace_id != first.context.trace_id  # no header: a new trace
    inside = [s for s in observed["spans"] if s.context.trace_id == first.context.trace_id]
    assert {s.name.split(" ")[0] for s in inside} >= {"invoke_workflow", "plan", "chat", "invoke_agent", "execute_tool"}


def test_token_usage_of_a_recorded_openai_response(observed: dict[str, Any]) -> None:
    chats = [s for s in observed["spans"] if s.attributes.get(GA.GEN_AI_RESPONSE_ID) == RECORDED["id"]]
    assert len(chats) == 1
    chat = chats[0]
    assert chat.kind is SpanKind.CLIENT and chat.name == "chat fake"
    assert chat.attributes[GA.GEN_AI_USAGE_INPUT_TOKENS] == RECORDED["usage"]["prompt_tokens"]
    assert chat.attributes[GA.GEN_AI_USAGE_OUTPUT_TOKENS] == RECORDED["usage"]["completion_tokens"]
    assert chat.attributes[GA.GEN_AI_RESPONSE_MODEL] == RECORDED["model"]
    assert chat.attributes[GA.GEN_AI_REQUEST_MODEL] == "fake"
    assert chat.attributes[GA.GEN_AI_PROVIDER_NAME] == "openai"
    assert chat.attributes[server_attributes.SERVER_ADDRESS] == "127.0.0.1"
    assert chat.attributes[server_attributes.SERVER_PORT] == observed["port"]
    assert tuple(chat.attributes[GA.GEN_AI_RESPONSE_FINISH_REASONS]) == ("tool_calls",)


def test_every_genai_span_of_the_round_trip_follows_the_conventions(observed: dict[str, Any]) -> None:
    spans = observed["spans"]
    genai = [s for s in spans if GA.GEN_AI_OPERATION_NAME in s.attributes]
    assert len(genai) == len([s for s in spans if s.attributes.get("skillc.turn") is not None
                              or s.name.split(" ")[0] in ("invoke_workflow", "plan", "chat", "invoke_agent",
                                                          "execute_tool")])
    for span in genai:
        assert_genai_span_compliant(span)
        operation = span.attributes[GA.GEN_AI_OPERATION_NAME]
        assert span.name.split(" ")[0] == operation, span.name  # `{gen_ai.operation.name} {…}`
    for span in (s for s in genai if s.attributes[GA.GEN_AI_OPERATION_NAME] == "invoke_workflow"):
        assert span.kind is SpanKind.INTERNAL
        assert span.name == f"invoke_workflow {span.attributes[GA.GEN_AI_WORKFLOW_NAME]}"
    workflows = {s.attributes[GA.GEN_AI_WORKFLOW_NAME] for s in genai if s.name.startswith("invoke_workflow")}
    assert workflows == {"skillc.turn", "editor"}
    for span in (s for s in genai if s.attributes[GA.GEN_AI_OPERATION_NAME] == "invoke_agent"):
        assert span.name == f"invoke_agent {span.attributes[GA.GEN_AI_AGENT_NAME]}"


def test_tool_spans_are_internal_with_a_client_child_for_the_mcp_call(observed: dict[str, Any]) -> None:
    spans = observed["spans"]
    tools = [s for s in spans if s.name.startswith("execute_tool ")]
    assert tools and all(s.kind is SpanKind.INTERNAL for s in tools)
    reached = [s for s in tools if s.attributes.get("skillc.mcp.server") == "cms"]
    assert sorted(s.attributes[GA.GEN_AI_TOOL_NAME] for s in reached) == ["cms_article_create", "cms_space_list"]
    for span in reached:
        children = [c for c in spans if c.parent is not None and c.parent.span_id == span.context.span_id]
        assert [(c.name, c.kind) for c in children] == [(f"tools/call {span.attributes[GA.GEN_AI_TOOL_NAME]}",
                                                         SpanKind.CLIENT)]
        assert children[0].attributes["mcp.method.name"] == "tools/call"
        assert children[0].attributes[GA.GEN_AI_TOOL_NAME] == span.attributes[GA.GEN_AI_TOOL_NAME]
    refused = [s for s in tools if s.attributes.get("skillc.call.outcome") == "refused"]
    assert refused and all(s.attributes[error_attributes.ERROR_TYPE] == "APPROVAL_REQUIRED" for s in refused)
    assert not any(c.parent is not None and c.parent.span_id == s.context.span_id for s in refused for c in spans)


def _metrics(observed: dict[str, Any]) -> dict[str, Any]:
    return {m.name: m for rm in observed["metrics"].resource_metrics for sm in rm.scope_metrics for m in sm.metrics}


def test_the_genai_client_metrics(observed: dict[str, Any]) -> None:
    metrics = _metrics(observed)
    duration = metrics[GM.GEN_AI_CLIENT_OPERATION_DURATION]
    assert duration.unit == "s"
    points = duration.data.data_points
    assert sum(p.count for p in points) == 5  # route, three steps, and the step after the approval
    for point in points:
        assert point.attributes[GA.GEN_AI_OPERATION_NAME] == "chat"
        assert point.attributes[GA.GEN_AI_PROVIDER_NAME] == "openai"
        assert point.attributes[GA.GEN_AI_REQUEST_MODEL] == "fake"
        assert point.attributes[server_attributes.SERVER_ADDRESS] == "127.0.0.1"
    usage = metrics[GM.GEN_AI_CLIENT_TOKEN_USAGE]
    assert usage.unit == "{token}"
    by_type = {p.attributes[GA.GEN_AI_TOKEN_TYPE]: p for p in usage.data.data_points
               if p.attributes.get(GA.GEN_AI_RESPONSE_MODEL) == RECORDED["model"]}
    assert (by_type["input"].sum, by_type["output"].sum) == (1117, 46)


def test_instrument_names_carry_no_unit_or_total_suffix(observed: dict[str, Any]) -> None:
    names = set(_metrics(observed))
    skillc = {n for n in names if n.startswith("skillc")}
    assert {"skillc.tool.calls", "skillc.turn.duration", "skillc.tool.call.duration"} <= skillc
    assert not [n for n in names if n.endswith(("_total", "_seconds", ".total", ".seconds"))]
