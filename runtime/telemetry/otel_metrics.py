"""The metrics registry mirrored to OpenTelemetry instruments (counters, an up-down counter for
pending approvals, histograms in seconds), under the same names and labels as attributes."""
from __future__ import annotations

from typing import Any

from opentelemetry import metrics as om

from skillc.runtime.telemetry.metrics import BUCKETS, DEFINITIONS


class Instruments:
    """One OTel instrument per skillc metric."""

    def __init__(self, meter_provider: Any = None) -> None:
        meter = (meter_provider or om.get_meter_provider()).get_meter("skillc")
        self._labels = {name: labels for name, (_, _, labels) in DEFINITIONS.items()}
        self._instruments: dict[str, Any] = {}
        for name, (kind, help_text, _) in DEFINITIONS.items():
            if kind == "counter":
                self._instruments[name] = meter.create_counter(name, description=help_text)
            elif kind == "gauge":
                self._instruments[name] = meter.create_up_down_counter(name, description=help_text)
            else:
                self._instruments[name] = meter.create_histogram(
                    name, unit="s", description=help_text, explicit_bucket_boundaries_advisory=list(BUCKETS))

    def _attributes(self, name: str, labels: tuple[str, ...]) -> dict[str, str]:
        return dict(zip(self._labels[name], labels))

    def add(self, name: str, value: float, labels: tuple[str, ...]) -> None:
        """A counter or gauge change."""
        self._instruments[name].add(value, self._attributes(name, labels))

    def observe(self, name: str, value: float, labels: tuple[str, ...]) -> None:
        """A histogram observation."""
        self._instruments[name].record(value, self._attributes(name, labels))
