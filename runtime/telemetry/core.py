"""Telemetry of one runtime: an observer of its trace writer that feeds the metrics and, with the
`otel` extra, OpenTelemetry spans; a hook around its MCP gateway's calls; a wrapper around its
model. `Telemetry.install(runtime)` puts the three in place (`open_runtime` / `create_app` call
it), `close()` takes them out of play.

Everything is built from the trace's own events (the trace stays the one source of truth), plus
three points the events cannot show: when a model call starts and ends, when an MCP request
leaves (its span's `traceparent` goes into the request's `_meta`), and which session a callback
belongs to (`trace.current_env()`).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from skillc.runtime.words.event_types import ToolCall, TraceEvent, TurnReply, TurnStarted, WriteSettled
from skillc.runtime.words.events import EventName
from skillc.runtime.telemetry import trace as trace_mod
from skillc.runtime.telemetry.metrics import REGISTRY, Registry, record_event, tool_label


@dataclass
class _Session:
    """Per-session timing the metrics need between events."""

    turn_started: float | None = None
    boundary: float = field(default_factory=time.perf_counter)  # end of the last model call or tool call


class NoSpan:
    """The tool-call hook's answer when no spans are made: nothing to send, nothing to record."""

    meta: dict[str, Any] = {}

    def done(self, outcome: Any) -> None:
        """Nothing to record."""

    def attach(self) -> None:
        """No context to make current."""

    def detach(self) -> None:
        """No context to restore."""


_NO_SPAN = NoSpan()


class Telemetry:
    """A runtime's observer: metrics always, spans when `spans` (an `otel.Spans`) is given, the
    registry's OpenTelemetry instruments when `mirror` (an `otel_metrics.Instruments`) is."""

    def __init__(self, registry: Registry = REGISTRY, spans: Any = None, *, mirror: Any = None) -> None:
        self.registry = registry
        self.spans = spans
        self.mirror = mirror
        self.on = True  # False once closed: a model wrapped earlier calls through unobserved
        self._sessions: dict[str, _Session] = {}

    def install(self, runtime: Any) -> None:
        """Observe `runtime`: its trace writer's events, its gateway's `tools/call`s (when spans
        are on and the gateway takes a hook), its model's calls."""
        if self.mirror is not None:
            self.registry.mirror = self.mirror
        if self not in runtime.trace.observers:
            runtime.trace.observers.append(self)
        if self.spans is not None and hasattr(runtime.gateway, "call_hook"):
            runtime.gateway.call_hook = self.tool_call
        model = runtime.model
        if isinstance(model, ObservedModel):
            if model._telemetry is self:
                return
            model = model._inner  # observed by telemetry installed before: this one replaces it
        runtime.model = ObservedModel(model, self)

    def close(self) -> None:
        """Stop observing (metrics collected so far stay readable)."""
        self.on = False
        if self.mirror is not None and self.registry.mirror is self.mirror:
            self.registry.mirror = None

    # ------------------------------------------------------------ trace observer

    def event(self, event: TraceEvent) -> None:
        """One trace event (called by the runtime's TraceWriter after writing it): its counters,
        then its type's timing (`TIMED`, if it has one), then its spans."""
        if not self.on:
            return
        session = str(event.get("session"))
        state = self._sessions.get(session)
        if state is None:
            state = self._sessions[session] = _Session()
        now = time.perf_counter()
        record_event(self.registry, event)
        timing = TIMED.get(event["type"])
        if timing is not None:
            timing(self, state, event, now)
        if self.spans is not None:
            self.spans.event(event, trace_mod.current_env())

    # ------------------------------------------------------------ one timing per event type

    def _turn_started(self, state: _Session, event: TurnStarted, now: float) -> None:
        state.turn_started = now
        state.boundary = now

    def _tool_call(self, state: _Session, event: ToolCall, now: float) -> None:
        self.registry.observe("skillc_tool_call_duration_seconds", max(0.0, now - state.boundary), tool_label(event))
        state.boundary = now

    def _write_settled(self, state: _Session, event: WriteSettled, now: float) -> None:
        state.boundary = now

    def _turn_reply(self, state: _Session, event: TurnReply, now: float) -> None:
        if state.turn_started is not None:
            self.registry.observe("skillc_turn_duration_seconds", now - state.turn_started)
        del self._sessions[str(event.get("session"))]  # nothing is kept between turns

    # ------------------------------------------------------------ model and MCP hooks

    def model_done(self, env: Any) -> None:
        """A model call ended: the next tool call's time starts here."""
        if env is not None:
            state = self._sessions.get(env.session.id)
            if state is not None:
                state.boundary = time.perf_counter()

    @contextmanager
    def tool_call(self, tool: str, server: str | None) -> Iterator[Any]:
        """Around one MCP `tools/call` (installed as the gateway's call hook)."""
        if self.spans is None or not self.on:
            yield _NO_SPAN
            return
        env = trace_mod.current_env()
        span = self.spans.tool_started(env, tool, server)
        span.attach()
        try:
            yield span
        except BaseException as exc:
            span.failed(exc)
            raise
        finally:
            span.detach()


# keyed by EventName, looked up by a plain string too; the other types time nothing
TIMED: dict[str, Callable[[Telemetry, _Session, Any, float], None]] = {
    EventName.TURN_STARTED: Telemetry._turn_started,
    EventName.TOOL_CALL: Telemetry._tool_call,
    EventName.WRITE_SETTLED: Telemetry._write_settled,
    EventName.TURN_REPLY: Telemetry._turn_reply,
}
"""The event types that start or end a timed stretch (a turn, the time to a tool call), each by its handler."""


class ObservedModel:
    """A model adapter seen through telemetry: each `complete` is timed (and a `chat` span when
    spans are on); every other attribute is the wrapped adapter's."""

    def __init__(self, inner: Any, telemetry: Telemetry) -> None:
        self._inner = inner
        self._telemetry = telemetry

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @property
    def inner(self) -> Any:
        """The adapter observed."""
        return self._inner

    async def complete(self, request: Any) -> Any:
        """The wrapped adapter's answer, observed."""
        telemetry = self._telemetry
        if not telemetry.on:  # closed since this model was wrapped
            return await self._inner.complete(request)
        env = trace_mod.current_env()
        handle = telemetry.spans.model_started(env, self._inner, request) if telemetry.spans is not None else None
        mirror = telemetry.mirror
        started = time.perf_counter()
        try:
            response = await self._inner.complete(request)
        except BaseException as exc:
            if handle is not None:
                handle.failed(exc)
            if mirror is not None:
                mirror.model_call(self._inner, request, time.perf_counter() - started, None, type(exc).__qualname__)
            raise
        finally:
            telemetry.model_done(env)
        if handle is not None:
            handle.done(response)
        if mirror is not None:
            mirror.model_call(self._inner, request, time.perf_counter() - started, response, None)
        return response
