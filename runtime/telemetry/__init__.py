"""Observability: the trace (`trace`, the audit log every step writes), its audit chain (always on),
metrics and OpenTelemetry spans (when installed).

    from skillc.runtime import telemetry
    tel = telemetry.build()                 # metrics + spans through the global OTel providers
    tel = telemetry.build(spans=False)      # metrics only (Prometheus text for GET /metrics)
    tel = telemetry.build(tracer_provider=tp, meter_provider=mp)   # explicit providers (tests)
    async with open_runtime(cfg, telemetry=tel) as rt: ...         # or create_app(..., telemetry=tel)
    telemetry.render_prometheus()           # the metrics as Prometheus text

Nothing here is process-wide but the metrics registry: a `Telemetry` is installed on one runtime
(`Telemetry.install`: its trace writer's observers, its MCP gateway's call hook, its model) by
`open_runtime` / `create_app`, which build it from `[telemetry]` of skillc.toml and the
environment when not given one (`runtime.config.TelemetryConfig.choice`, `from_choice`). A trace
writer never switches telemetry on by itself; two runtimes in one process can differ.

Off (the default), nothing here is imported by the runtime and no OpenTelemetry module is
loaded: the trace writer's only cost is an empty observer list.
"""
from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from skillc.runtime.telemetry.metrics import REGISTRY, render_prometheus

if TYPE_CHECKING:
    from skillc.runtime.outside.config import TelemetryChoice
    from skillc.runtime.telemetry.core import Telemetry

__all__ = ["REGISTRY", "build", "caller_context", "from_choice", "render_prometheus"]

log = logging.getLogger(__name__)


def build(*, spans: bool = True, metrics: bool = True, tracer_provider: Any = None,
          meter_provider: Any = None) -> Telemetry:
    """A `Telemetry` (not installed anywhere yet: pass it to `open_runtime` / `create_app`, or
    `install` it on a runtime). Spans need the `otel` extra; without it, only metrics are kept.
    The metrics go to the process's `REGISTRY` (what `GET /metrics` serves)."""
    from skillc.runtime.telemetry.core import Telemetry

    span_builder = None
    if spans:
        try:
            from skillc.runtime.telemetry.otel import Spans
        except ImportError as exc:  # the extra is not installed
            log.warning("telemetry: spans need `pip install skillc[otel]` (%s); metrics only", exc)
        else:
            span_builder = Spans(tracer_provider)
    mirror = None
    if metrics and (meter_provider is not None or span_builder is not None):
        try:
            from skillc.runtime.telemetry.otel_metrics import Instruments
        except ImportError:
            mirror = None
        else:
            mirror = Instruments(meter_provider)
    return Telemetry(REGISTRY, span_builder, mirror=mirror)


def from_choice(choice: TelemetryChoice | None) -> Telemetry | None:
    """The `Telemetry` a configuration chose (`TelemetryConfig.choice`), or None when off."""
    if choice is None:
        return None
    if choice.sdk_from_env:
        _sdk_from_env()
    return build(spans=choice.spans, metrics=choice.metrics)


@contextlib.contextmanager
def caller_context(tel: Telemetry | None, headers: Mapping[str, str]) -> Iterator[None]:
    """While a run is started for an HTTP request: the caller's W3C trace context (`traceparent`,
    `tracestate`) is the current one, so the run's task (which copies the context it is created
    in) opens its turn inside the caller's trace. Nothing happens when spans are off (`tel` None
    or without spans), when the request carries no `traceparent`, or when a span is already
    current (an ASGI instrumentation of the application's own, whose server span already
    continues the caller's trace)."""
    if tel is None or tel.spans is None or not headers.get("traceparent"):
        yield
        return
    from skillc.runtime.telemetry.otel_calls import attach_caller

    token = attach_caller(headers)
    try:
        yield
    finally:
        if token is not None:
            from opentelemetry import context as otel_context

            otel_context.detach(token)


def _sdk_from_env() -> None:
    """Install an SDK tracer provider from OTEL_* variables, unless the application set one."""
    try:
        from opentelemetry import trace as ot
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError:
        return
    if isinstance(ot.get_tracer_provider(), TracerProvider):
        return  # the application (or opentelemetry-instrument) already configured one
    provider = TracerProvider()
    exporter_name = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",")[0].strip()
    exporter: Any = None
    if exporter_name == "console":
        exporter = ConsoleSpanExporter()
    elif exporter_name == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            log.warning("telemetry: OTEL_TRACES_EXPORTER=otlp needs opentelemetry-exporter-otlp-proto-http")
        else:
            exporter = OTLPSpanExporter()
    if exporter is not None:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    ot.set_tracer_provider(provider)
