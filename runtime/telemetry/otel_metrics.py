"""The metrics registry mirrored to OpenTelemetry instruments, and the GenAI conventions' client
metrics of model calls.

skillc's instruments carry OpenTelemetry names (dotted, no unit and no `_total`: an exporter adds
those, e.g. Prometheus turns `skillc.tool.calls` into `skillc_tool_calls_total` and
`skillc.turn.duration` with unit `s` into `skillc_turn_duration_seconds`, the names `GET /metrics`
serves), the registry's labels as attributes. Model calls record `gen_ai.client.operation.duration`
(s) and `gen_ai.client.token.usage` ({token}) with the conventions' attributes and buckets.
"""
from __future__ import annotations

from typing import Any

from opentelemetry import metrics as om

from skillc.runtime.telemetry.metrics import BUCKETS, DEFINITIONS
from skillc.runtime.telemetry.otel_calls import model_attributes

# registry name -> OpenTelemetry instrument name
OTEL_NAMES: dict[str, str] = {
    "skillc_tool_calls_total": "skillc.tool.calls",
    "skillc_refusals_total": "skillc.refusals",
    "skillc_approvals_pending": "skillc.approvals.pending",
    "skillc_approvals_decided_total": "skillc.approvals.decided",
    "skillc_writes_settled_total": "skillc.writes.settled",
    "skillc_turn_duration_seconds": "skillc.turn.duration",
    "skillc_tool_call_duration_seconds": "skillc.tool.call.duration",
}
# The conventions' advisory bucket boundaries.
_DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
_TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864)


class Instruments:
    """One OTel instrument per skillc metric, plus the GenAI client metrics."""

    def __init__(self, meter_provider: Any = None) -> None:
        meter = (meter_provider or om.get_meter_provider()).get_meter("skillc")
        self._labels = {name: labels for name, (_, _, labels) in DEFINITIONS.items()}
        self._instruments: dict[str, Any] = {}
        for name, (kind, help_text, _) in DEFINITIONS.items():
            otel_name = OTEL_NAMES[name]
            if kind == "counter":
                self._instruments[name] = meter.create_counter(otel_name, description=help_text)
            elif kind == "gauge":
                self._instruments[name] = meter.create_up_down_counter(otel_name, description=help_text)
            else:
                self._instruments[name] = meter.create_histogram(
                    otel_name, unit="s", description=help_text, explicit_bucket_boundaries_advisory=list(BUCKETS))
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=list(_DURATION_BUCKETS))
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=list(_TOKEN_BUCKETS))

    def _attributes(self, name: str, labels: tuple[str, ...]) -> dict[str, str]:
        return dict(zip(self._labels[name], labels))

    def add(self, name: str, value: float, labels: tuple[str, ...]) -> None:
        """A counter or gauge change."""
        self._instruments[name].add(value, self._attributes(name, labels))

    def observe(self, name: str, value: float, labels: tuple[str, ...]) -> None:
        """A histogram observation."""
        self._instruments[name].record(value, self._attributes(name, labels))

    def model_call(self, model: Any, request: Any, seconds: float, response: Any, error: str | None) -> None:
        """One model call: its duration, and the tokens the server counted (when it said)."""
        attrs = model_attributes(model, request)
        model = getattr(response, "response_model", None)
        if isinstance(model, str):
            attrs["gen_ai.response.model"] = model
        if error is not None:
            attrs["error.type"] = error
        self.operation_duration.record(seconds, attrs)
        usage = getattr(response, "usage", None)
        if usage is None:
            return
        for kind, count in (("input", usage.input_tokens), ("output", usage.output_tokens)):
            self.token_usage.record(count, {**attrs, "gen_ai.token.type": kind})
