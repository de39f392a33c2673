"""Telemetry belongs to a runtime, not to the process: a TraceWriter never switches it on from the
environment, `open_runtime` installs what `[telemetry]` and the environment choose (through the
config layer), and two runtimes in one process can differ (one observed, one not)."""
from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.telemetry_scenario import run_async, write_scenario
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from skillc.runtime import open_runtime, telemetry
from skillc.runtime.outside.config import Config, TelemetryConfig
from skillc.runtime.model.scripted import ScriptedModel
from skillc.runtime.telemetry.core import ObservedModel, Telemetry
from skillc.runtime.telemetry.trace import TraceWriter
from skillc.scenario.runner import run_scenario

SWITCHES = ("OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED",
            "SKILLC_TELEMETRY")


@pytest.fixture
def quiet_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)
    telemetry.REGISTRY.reset()
    yield
    telemetry.REGISTRY.reset()


class _Recording(dict[str, str]):
    """os.environ that remembers which names were read."""

    def __init__(self, data: Any) -> None:
        super().__init__(data)
        self.read: list[str] = []

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        self.read.append(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        self.read.append(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.append(str(key))
        return super().__contains__(key)


def test_trace_writer_reads_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    environ = _Recording({**os.environ, "SKILLC_TELEMETRY": "1", "OTEL_SERVICE_NAME": "x",
                          "SKILLC_AUDIT_KEY": "k"})
    monkeypatch.setattr(os, "environ", environ)
    writer = TraceWriter()
    writer.emit({"type": "turn.started", "message": "m"}, session="s", turn=1)
    assert writer.observers == [] and writer.chain is not None and not writer.chain.keyed
    assert environ.read == []  # telemetry and the audit key come from whoever opens the runtime


def test_open_runtime_reads_the_audit_key(monkeypatch: pytest.MonkeyPatch, quiet_env: None) -> None:
    monkeypatch.setenv("SKILLC_AUDIT_KEY", "k")

    async def chain_keyed() -> bool:
        async with open_runtime(Config(), studio=object(), gateway=_Gateway(), model=ScriptedModel(),
                                store=":memory:") as rt:
            return bool(rt.trace.chain.keyed)

    assert run_async(chain_keyed())


def test_choice_comes_from_the_config_and_the_environment() -> None:
    off = TelemetryConfig()
    assert off.choice({}) is None
    assert off.choice({}, service=True) == telemetry_choice(spans=False)  # serve: metrics for GET /metrics
    assert TelemetryConfig(metrics=False).choice({}, service=True) is None
    assert off.choice({"SKILLC_TELEMETRY": "metrics"}) == telemetry_choice(spans=False)
    assert off.choice({"SKILLC_TELEMETRY": "1"}) == telemetry_choice(spans=True, sdk_from_env=True)
    assert off.choice({"OTEL_SERVICE_NAME": "x"}) == telemetry_choice(spans=True, sdk_from_env=True)
    assert off.choice({"OTEL_SERVICE_NAME": "x", "OTEL_SDK_DISABLED": "true"}) is None
    on = TelemetryConfig(enabled=True, spans=False)
    assert on.choice({}) == telemetry_choice(spans=False)


def telemetry_choice(**fields: Any) -> Any:
    from skillc.runtime.outside.config import TelemetryChoice

    return TelemetryChoice(**fields)


class _Gateway:
    """A gateway double that takes a call hook."""

    on_invoked = None
    unreachable_servers: dict[str, str] = {}

    def __init__(self) -> None:
        self.call_hook: Any = None


def test_open_runtime_installs_what_the_environment_chooses(quiet_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    async def opened() -> tuple[Any, Any]:
        async with open_runtime(Config(), studio=object(), gateway=_Gateway(), model=ScriptedModel(),
                                store=":memory:") as rt:
            return list(rt.trace.observers), rt.model

    observers, model = run_async(opened())
    assert observers == [] and isinstance(model, ScriptedModel)  # off: nothing installed, nothing wrapped
    monkeypatch.setenv("SKILLC_TELEMETRY", "metrics")
    observers, model = run_async(opened())
    assert len(observers) == 1 and isinstance(observers[0], Telemetry) and observers[0].spans is None
    assert isinstance(model, ObservedModel)
    assert not observers[0].on  # the telemetry open_runtime built is closed with the runtime


def test_two_runtimes_in_one_process_one_observed(tmp_path: Path, quiet_env: None) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tel = telemetry.build(tracer_provider=provider)
    scenario = write_scenario(tmp_path)

    async def both() -> list[Any]:
        return list(await asyncio.gather(
            run_scenario(scenario, trace_path=str(tmp_path / "seen.jsonl"), telemetry=tel),
            run_scenario(scenario, trace_path=str(tmp_path / "unseen.jsonl"))))

    try:
        seen, unseen = run_async(both())
    finally:
        tel.close()
    for result in (seen, unseen):
        assert result.error is None and result.crash is None and not result.problems, result
    turns = sum(1 for e in seen.events if e["type"] == "turn.started")
    roots = [s for s in exporter.get_finished_spans() if s.parent is None]
    assert len(roots) == turns  # one turn tree per turn of the observed runtime, none of the other
    calls = sum(1 for e in seen.events if e["type"] == "tool.call")
    counted = sum(float(line.rsplit(" ", 1)[1]) for line in telemetry.render_prometheus().splitlines()
                  if line.startswith("skillc_tool_calls_total{"))
    assert counted == calls
