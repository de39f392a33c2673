"""Observability: the audit chain (always), OpenTelemetry spans and metrics (the `otel` extra).

Importing this package imports no OpenTelemetry module: telemetry off costs nothing.
`skillc.runtime.telemetry.metrics.render_prometheus()` renders the metrics as Prometheus text.
"""
from __future__ import annotations
