"""The spans of calls leaving the process: a model call (`chat {model}`, kind CLIENT) and an MCP
tool call (`execute_tool {tool}`, kind INTERNAL, with a `tools/call {tool}` CLIENT child for the
request itself), and the caller's trace context taken from an incoming request.

The GenAI conventions make `execute_tool` an INTERNAL span (the tool's execution as the agent
sees it, chain steps included) and leave the wire to the MCP conventions' client span. When the
application's global tracer provider is the one skillc records to, the MCP SDK makes that client
span itself (`MCP send tools/call …`, nested under the current context); otherwise skillc makes
it, so the request always has a CLIENT span and its `traceparent` is that span's.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace as ot
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

PROPAGATOR = TraceContextTextMapPropagator()
MCP_METHOD = "tools/call"


def attach_caller(headers: Mapping[str, str]) -> Any:
    """Make the W3C trace context of `headers` current (the token to detach), unless a valid span
    is current already or the headers hold no valid context (None then)."""
    if ot.get_current_span().get_span_context().is_valid:
        return None
    carrier = {k: headers[k] for k in ("traceparent", "tracestate") if headers.get(k)}
    context = PROPAGATOR.extract(carrier)
    if not ot.get_current_span(context).get_span_context().is_valid:
        return None  # a malformed traceparent starts a new trace, as if there were none
    return otel_context.attach(context)


class ToolSpan:
    """The gateway's view of an execute_tool span: `meta` carries the request's traceparent."""

    def __init__(self, state: Any, span: Any, client: Any, tool: str) -> None:
        self.state, self.span, self.client, self.tool = state, span, client, tool
        self.meta: dict[str, Any] = {}
        self._context = ot.set_span_in_context(client if client is not None else span)
        self._token: Any = None
        PROPAGATOR.inject(self.meta, context=self._context)

    def attach(self) -> None:
        """Make the request's span current while it goes out: the MCP SDK's own client span (made
        when the application's global provider is skillc's) nests under it, in this trace."""
        self._token = otel_context.attach(self._context)

    def detach(self) -> None:
        """Restore the caller's context."""
        if self._token is not None:
            otel_context.detach(self._token)
            self._token = None

    def done(self, outcome: Any) -> None:
        """The MCP outcome: its server and its failure name; the execute_tool span stays open for
        the chain's verdict (tool.call), the client span ends with the request."""
        if outcome.server:
            self.span.set_attribute("skillc.mcp.server", outcome.server)
        if outcome.error:
            self.span.set_attribute("skillc.mcp.error", outcome.error)
        if self.client is not None:
            if outcome.error:
                self.client.set_attribute("error.type", str(outcome.error))
                self.client.set_status(Status(StatusCode.ERROR))
            self.client.end()
        if self.state is None:  # no turn to close it later
            self.span.end()

    def failed(self, exc: BaseException) -> None:
        """The call raised (a bug or a cancellation): the spans end with the exception's type."""
        for span in (self.client, self.span):
            if span is not None:
                span.set_attribute("error.type", type(exc).__qualname__)
                span.set_status(Status(StatusCode.ERROR))
                span.end()
        if self.state is not None and self.state.tool is self.span:
            self.state.tool = None


def client_span(tracer: Any, provider: Any, parent: Any, tool: str, server: str | None) -> Any:
    """The MCP client span of one `tools/call`, or None when the MCP SDK makes it (the global
    tracer provider is the one skillc records to)."""
    if provider is ot.get_tracer_provider():
        return None
    attrs: dict[str, Any] = {"mcp.method.name": MCP_METHOD, "gen_ai.tool.name": tool}
    if server:
        attrs["skillc.mcp.server"] = server
    return tracer.start_span(f"{MCP_METHOD} {tool}", context=ot.set_span_in_context(parent), kind=SpanKind.CLIENT,
                             attributes=attrs)


class ChatSpan:
    """A model call's span; its end is where the next execute_tool span starts."""

    def __init__(self, span: Any, state: Any) -> None:
        self.span, self.state = span, state

    def done(self, response: Any) -> None:
        """What the server said about the call: finish reason, token usage, model, response id."""
        calls = getattr(response, "tool_calls", None) or []
        self.span.set_attribute("gen_ai.response.finish_reasons", ["tool_calls" if calls else "stop"])
        usage = getattr(response, "usage", None)
        for key in ("input_tokens", "output_tokens"):
            value = getattr(usage, key, None) if usage is not None else None
            if isinstance(value, int):
                self.span.set_attribute(f"gen_ai.usage.{key}", value)
        for key in ("response_model", "response_id"):
            value = getattr(response, key, None)
            if isinstance(value, str):
                self.span.set_attribute(f"gen_ai.{key.replace('_', '.')}", value)
        end = time.time_ns()
        self.span.end(end_time=end)
        self.state.boundary = end

    def failed(self, exc: BaseException) -> None:
        """The call raised: the span ends with the exception's type."""
        self.span.set_attribute("error.type", type(exc).__qualname__)
        self.span.set_status(Status(StatusCode.ERROR))
        self.span.end()


def model_attributes(model: Any, request: Any) -> dict[str, Any]:
    """The attributes a model call's span and metrics share: operation, provider, request model,
    and the server when the adapter talks to one."""
    name = str(getattr(model, "model", None) or type(model).__name__)
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": name,
                             "gen_ai.provider.name": str(getattr(model, "provider", None) or "skillc")}
    address, port = getattr(model, "server_address", None), getattr(model, "server_port", None)
    if isinstance(address, str) and address:
        attrs["server.address"] = address
        if isinstance(port, int):
            attrs["server.port"] = port
    return attrs
