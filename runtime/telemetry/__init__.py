"""Observability: the audit chain (always on), metrics and OpenTelemetry spans (when enabled).

    from skillc.runtime import telemetry
    telemetry.enable()                      # metrics + spans through the global OTel providers
    telemetry.enable(spans=False)           # metrics only (Prometheus text for GET /metrics)
    telemetry.enable(tracer_provider=tp, meter_provider=mp)   # explicit providers (tests)
    telemetry.render_prometheus()           # the metrics as Prometheus text
    telemetry.disable()

Telemetry also switches itself on when the process environment asks (`wanted_by_env`): any of
`OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_TRACES_EXPORTER` (and not
`OTEL_SDK_DISABLED=true`), or `SKILLC_TELEMETRY=1` (`=metrics` for metrics only); or from
`[telemetry]` of skillc.toml through `configure(table)`.

Off (the default), nothing here is imported by the runtime and no OpenTelemetry module is
loaded: the trace writer's only cost is an empty observer list.
"""
from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from typing import Any

from skillc.runtime.telemetry.metrics import REGISTRY, render_prometheus

__all__ = ["REGISTRY", "active", "caller_context", "configure", "disable", "enable", "enable_from_env", "for_service",
           "read_table", "render_prometheus", "wanted_by_env"]

log = logging.getLogger(__name__)
_ACTIVE: Any = None
_OTEL_VARS = ("OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_EXPORTER")


def wanted_by_env(environ: Mapping[str, str] | None = None) -> bool:
    """True when the environment switches telemetry on (see the module docstring)."""
    env = os.environ if environ is None else environ
    if env.get("SKILLC_TELEMETRY", "").strip().lower() in ("1", "true", "on", "yes", "metrics"):
        return True
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(env.get(name) for name in _OTEL_VARS)


def enable(*, spans: bool = True, metrics: bool = True, tracer_provider: Any = None,
           meter_provider: Any = None) -> Any:
    """Switch telemetry on for the whole process (every trace writer, every MCP call); returns
    the `Telemetry` observer. Spans need the `otel` extra; without it, only metrics are kept."""
    global _ACTIVE
    from skillc.runtime import trace
    from skillc.runtime.telemetry.core import Telemetry

    disable()
    span_builder = None
    if spans:
        try:
            from skillc.runtime.telemetry.otel import Spans
        except ImportError as exc:  # the extra is not installed
            log.warning("telemetry: spans need `pip install skillc[otel]` (%s); metrics only", exc)
        else:
            span_builder = Spans(tracer_provider)
    if metrics and (meter_provider is not None or span_builder is not None):
        try:
            from skillc.runtime.telemetry.otel_metrics import Instruments
        except ImportError:
            REGISTRY.mirror = None
        else:
            REGISTRY.mirror = Instruments(meter_provider)
    _ACTIVE = Telemetry(REGISTRY, span_builder)
    trace.add_observer(_ACTIVE)
    if span_builder is not None:
        trace.set_call_hook(_ACTIVE.tool_call)
    return _ACTIVE


def disable() -> None:
    """Switch telemetry off (metrics collected so far stay readable)."""
    global _ACTIVE
    from skillc.runtime import trace

    if _ACTIVE is not None:
        trace.remove_observer(_ACTIVE)
        trace.set_call_hook(None)
        REGISTRY.mirror = None
        _ACTIVE = None


def active() -> Any:
    """The running `Telemetry` observer, or None when telemetry is off."""
    return _ACTIVE


@contextlib.contextmanager
def caller_context(headers: Mapping[str, str]) -> Iterator[None]:
    """While a run is started for an HTTP request: the caller's W3C trace context (`traceparent`,
    `tracestate`) is the current one, so the run's task (which copies the context it is created
    in) opens its turn inside the caller's trace. Nothing happens when spans are off, when the
    request carries no `traceparent`, or when a span is already current (an ASGI instrumentation
    of the application's own, whose server span already continues the caller's trace)."""
    if _ACTIVE is None or _ACTIVE.spans is None or not headers.get("traceparent"):
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


def enable_from_env() -> Any:
    """`enable` as the environment asks: `SKILLC_TELEMETRY=metrics` keeps metrics only; with
    OTEL_* variables and no SDK provider set yet, one is set up from them (console exporter for
    `OTEL_TRACES_EXPORTER=console`, OTLP when its exporter package is installed)."""
    if os.environ.get("SKILLC_TELEMETRY", "").strip().lower() == "metrics":
        return enable(spans=False)
    _sdk_from_env()
    return enable()


def configure(table: Mapping[str, Any] | None) -> Any:
    """`[telemetry]` of skillc.toml: `enabled` (bool), `spans` (bool, default true),
    `metrics` (bool, default true). Returns the observer, or None when not enabled."""
    table = dict(table or {})
    if not table.get("enabled", False):
        return None
    if table.get("spans", True):
        _sdk_from_env()
    return enable(spans=bool(table.get("spans", True)), metrics=bool(table.get("metrics", True)))


def read_table(config_path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The `[telemetry]` table of a skillc.toml (empty when there is no file or no table)."""
    import tomllib
    from pathlib import Path

    if config_path is None or not Path(config_path).is_file():
        return {}
    try:
        table = tomllib.loads(Path(config_path).read_text(encoding="utf-8")).get("telemetry", {})
    except (OSError, tomllib.TOMLDecodeError):
        return {}  # the config loader reports an unreadable file
    return dict(table) if isinstance(table, dict) else {}


def for_service(config_path: str | os.PathLike[str] | None = None) -> Any:
    """What `skillc serve` switches on: spans and metrics when `[telemetry] enabled = true` or
    the environment asks; otherwise metrics only (for `GET /metrics`), unless `metrics = false`.
    Telemetry the application already switched on (`enable(...)` before `create_app`) is kept
    as it is: the application's own providers win over the config and the environment."""
    if _ACTIVE is not None:
        return _ACTIVE
    table = read_table(config_path)
    if table.get("enabled", False):
        return configure(table)
    if wanted_by_env():
        return enable_from_env()
    if table.get("metrics", True):
        return enable(spans=False)
    return None


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
