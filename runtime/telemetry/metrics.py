"""skillc's metrics: an in-process registry (rendered as Prometheus text for `GET /metrics`),
mirrored to OpenTelemetry instruments when OTel metrics are on.

| metric | kind | labels |
|---|---|---|
| `skillc_tool_calls_total` | counter | `tool`, `outcome` (ok, refused, failed, business_failed, uncertain, replayed) |
| `skillc_refusals_total` | counter | `error` (the spec's name), `code` |
| `skillc_approvals_pending` | gauge | — |
| `skillc_approvals_decided_total` | counter | `decision` (CONFIRM, REJECT, CANCEL) |
| `skillc_writes_settled_total` | counter | `outcome` (SUCCESS, FAILED), `route` (direct, verify, user) |
| `skillc_turn_duration_seconds` | histogram | — |
| `skillc_tool_call_duration_seconds` | histogram | `tool` |

No label ever holds an argument value: only tool names the studio configures (`other` for a name
the model invents), error names and codes.
"""
from __future__ import annotations

import math
import threading
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from skillc.runtime.words.event_types import AuditApproval, ToolCall, TraceEvent, WriteSettled
from skillc.runtime.words.events import EventName
from skillc.runtime.words.errors import ErrorName
from skillc.runtime.words.vocab import EvidenceStatus

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
ROUTES = {"call": "direct", "verify": "verify", "user": "user"}

# name -> (kind, help, label names)
DEFINITIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "skillc_tool_calls_total": ("counter", "Tool calls (business and builtin) by tool and outcome.", ("tool", "outcome")),
    "skillc_refusals_total": ("counter", "Calls refused before reaching a tool, by the spec's error name and code.",
                              ("error", "code")),
    "skillc_approvals_pending": ("gauge", "Approvals asked and not yet answered (this process).", ()),
    "skillc_approvals_decided_total": ("counter", "Approvals answered, by decision.", ("decision",)),
    "skillc_writes_settled_total": ("counter", "Writes settled, by outcome and route (direct, verify, user).",
                                    ("outcome", "route")),
    "skillc_turn_duration_seconds": ("histogram", "Wall time of a turn, from its message to its reply.", ()),
    "skillc_tool_call_duration_seconds": ("histogram", "Wall time of a tool call, chain steps included.", ("tool",)),
}


class Registry:
    """Counters, gauges and histograms keyed by (metric, label values); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.values: dict[tuple[str, tuple[str, ...]], float] = {}
        self.histograms: dict[tuple[str, tuple[str, ...]], list[float]] = {}  # bucket counts + [sum, count]
        self.mirror: Any = None  # OTel instruments (see otel.py), when OTel metrics are on

    def add(self, name: str, value: float = 1.0, *labels: str) -> None:
        """Add to a counter or gauge."""
        with self._lock:
            key = (name, labels)
            self.values[key] = self.values.get(key, 0.0) + value
        if self.mirror is not None:
            self.mirror.add(name, value, labels)

    def observe(self, name: str, value: float, *labels: str) -> None:
        """Record one observation in a histogram."""
        with self._lock:
            key = (name, labels)
            counts = self.histograms.get(key)
            if counts is None:
                counts = self.histograms[key] = [0.0] * (len(BUCKETS) + 3)  # buckets, overflow, sum, count
            counts[bisect_left(BUCKETS, value)] += 1  # `le` buckets: value <= bound
            counts[-2] += value
            counts[-1] += 1
        if self.mirror is not None:
            self.mirror.observe(name, value, labels)

    def get(self, name: str, *labels: str) -> float:
        """A counter's or gauge's current value (0 when never touched)."""
        return self.values.get((name, labels), 0.0)

    def count(self, name: str, *labels: str) -> int:
        """How many observations a histogram holds."""
        counts = self.histograms.get((name, labels))
        return int(counts[-1]) if counts else 0

    def reset(self) -> None:
        """Forget everything (tests)."""
        with self._lock:
            self.values.clear()
            self.histograms.clear()

    def render(self) -> str:
        """The Prometheus text exposition format (0.0.4)."""
        with self._lock:
            values = dict(self.values)
            histograms = {k: list(v) for k, v in self.histograms.items()}
        out: list[str] = []
        for name, (kind, help_text, label_names) in DEFINITIONS.items():
            out.append(f"# HELP {name} {help_text}")
            out.append(f"# TYPE {name} {kind}")
            if kind == "histogram":
                for (metric, labels), counts in sorted(histograms.items()):
                    if metric != name:
                        continue
                    base = _labels(label_names, labels)
                    running = 0.0
                    for bound, n in zip(BUCKETS, counts):
                        running += n
                        le = 'le="' + _num(bound) + '"'
                        out.append(f"{name}_bucket{_join(base, le)} {_num(running)}")
                    inf = 'le="+Inf"'
                    out.append(f"{name}_bucket{_join(base, inf)} {_num(counts[-1])}")
                    out.append(f"{name}_sum{_wrap(base)} {_num(counts[-2])}")
                    out.append(f"{name}_count{_wrap(base)} {_num(counts[-1])}")
            else:
                for (metric, labels), value in sorted(values.items()):
                    if metric == name:
                        out.append(f"{name}{_wrap(_labels(label_names, labels))} {_num(value)}")
        return "\n".join(out) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(names: tuple[str, ...], values: tuple[str, ...]) -> str:
    return ",".join(f'{n}="{_escape(str(v))}"' for n, v in zip(names, values))


def _join(base: str, extra: str) -> str:
    return "{" + (base + "," if base else "") + extra + "}"


def _wrap(base: str) -> str:
    return "{" + base + "}" if base else ""


def _num(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if float(value).is_integer() else repr(value)


REGISTRY = Registry()


def render_prometheus() -> str:
    """skillc's metrics in the Prometheus text format (what `GET /metrics` serves)."""
    return REGISTRY.render()


def tool_outcome(event: ToolCall) -> str:
    """A tool.call event's outcome label."""
    if event.get("replayed"):
        return "replayed"
    if event.get("ok"):
        return "ok"
    if event.get("status") == EvidenceStatus.UNKNOWN:
        return "uncertain"
    if event.get("error") == ErrorName.TOOL_BUSINESS_FAILED:
        return "business_failed"
    if event.get("evidence") is None and event.get("status") is None:
        return "refused"  # stopped before any tool was reached
    return "failed"


OTHER_TOOL = "other"


def tool_label(event: ToolCall) -> str:
    """The `tool` label of a tool.call event: its name when the studio configures it (every call
    but a CATALOG_DENIED one named a tool of the node's catalog or a builtin), else "other". A name
    the model invents never becomes a label: the series stay bounded, and no model-written text
    reaches /metrics, which needs no identity."""
    if event.get("error") == ErrorName.CATALOG_DENIED:
        return OTHER_TOOL
    return str(event.get("tool"))


def record_event(registry: Registry, event: TraceEvent) -> None:
    """Update the counters an event stands for (latencies are timed by the listener): its type's
    handler in `COUNTED`, if it has one."""
    count = COUNTED.get(event["type"])
    if count is not None:
        count(registry, event)


# fields read with .get: record_event also counts partial events (tests/runtime/test_telemetry_metrics.py)
def _tool_call(registry: Registry, event: ToolCall) -> None:
    outcome = tool_outcome(event)
    registry.add("skillc_tool_calls_total", 1, tool_label(event), outcome)
    if outcome == "refused":
        registry.add("skillc_refusals_total", 1, str(event.get("error")), str(event.get("code")))


def _audit_approval(registry: Registry, event: AuditApproval) -> None:
    if event.get("decision") == "REQUESTED":
        registry.add("skillc_approvals_pending", 1)
    else:
        registry.add("skillc_approvals_pending", -1)
        registry.add("skillc_approvals_decided_total", 1, str(event.get("decision")))


def _write_settled(registry: Registry, event: WriteSettled) -> None:
    registry.add("skillc_writes_settled_total", 1, str(event.get("status")),
                 ROUTES.get(str(event.get("via")), str(event.get("via"))))


# keyed by EventName, looked up by a plain string too; the other types count nothing
COUNTED: dict[str, Callable[[Registry, Any], None]] = {
    EventName.TOOL_CALL: _tool_call,
    EventName.AUDIT_APPROVAL: _audit_approval,
    EventName.WRITE_SETTLED: _write_settled,
}
"""The event types the counters stand for, each by its handler."""
