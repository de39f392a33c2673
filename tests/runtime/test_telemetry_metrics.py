"""Metrics: `GET /metrics` serves the Prometheus text; `skillc serve` switches metrics on by
default and spans only when configured; the renderer escapes label values."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from skillc.runtime import telemetry
from skillc.runtime.server import metrics as metrics_route
from skillc.runtime.telemetry.metrics import Registry, record_event


@pytest.fixture(autouse=True)
def _off() -> Iterator[None]:
    yield
    telemetry.REGISTRY.reset()


def test_metrics_route_serves_prometheus_text() -> None:
    telemetry.REGISTRY.reset()
    record_event(telemetry.REGISTRY, {"type": "tool.call", "tool": "cms_get", "ok": True})
    app = Starlette(routes=metrics_route.routes(None))  # type: ignore[arg-type]  # the route needs no context
    response = TestClient(app).get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert 'skillc_tool_calls_total{tool="cms_get",outcome="ok"} 1' in response.text.splitlines()
    assert "# TYPE skillc_turn_duration_seconds histogram" in response.text


def test_serve_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillc.runtime.outside.config import Config, load_config

    for name in ("OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_EXPORTER", "SKILLC_TELEMETRY"):
        monkeypatch.delenv(name, raising=False)
    # a global tracer provider can be set once per process: not by a test
    monkeypatch.setattr(telemetry, "_sdk_from_env", lambda: None)
    observer = telemetry.from_choice(Config().telemetry.choice(service=True))
    assert observer is not None and observer.spans is None  # metrics only
    config = tmp_path / "skillc.toml"
    config.write_text("[telemetry]\nmetrics = false\n", encoding="utf-8")
    assert telemetry.from_choice(load_config(config).telemetry.choice(service=True)) is None
    config.write_text("[telemetry]\nenabled = true\n", encoding="utf-8")
    observer = telemetry.from_choice(load_config(config).telemetry.choice(service=True))
    assert observer is not None and observer.spans is not None


def test_label_values_are_escaped_and_outcomes_named() -> None:
    registry = Registry()
    record_event(registry, {"type": "tool.call", "tool": 'we"ird\ntool', "ok": False, "error": "ARG_REJECTED",
                            "code": "agent_runtime.40001", "evidence": None, "status": None})
    record_event(registry, {"type": "tool.call", "tool": "w", "ok": False, "error": "TOOL_BUSINESS_FAILED",
                            "evidence": "e1", "status": "SUCCESS"})
    record_event(registry, {"type": "write.settled", "status": "FAILED", "via": "user"})
    record_event(registry, {"type": "audit.approval", "decision": "REQUESTED"})
    text = registry.render()
    assert 'skillc_tool_calls_total{tool="we\\"ird\\ntool",outcome="refused"} 1' in text
    assert 'skillc_tool_calls_total{tool="w",outcome="business_failed"} 1' in text
    assert 'skillc_writes_settled_total{outcome="FAILED",route="user"} 1' in text
    assert "skillc_approvals_pending 1" in text
    registry.observe("skillc_tool_call_duration_seconds", 120.0, "slow")  # beyond the last bucket
    assert 'skillc_tool_call_duration_seconds_bucket{tool="slow",le="60"} 0' in registry.render()
    assert 'skillc_tool_call_duration_seconds_bucket{tool="slow",le="+Inf"} 1' in registry.render()
