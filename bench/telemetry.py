"""What telemetry costs per tool call (not a test; prints one table measured in one run).

Runs `bench/turns.py` (one turn, 5 business tool calls, 200 sessions) in rounds, alternating:
- the audit chain off (`prev`/`hash` not computed): the baseline before issue 17;
- telemetry off (the default: the chain and audit events only);
- metrics on (`telemetry.enable(spans=False)`);
- spans and metrics on (an SDK TracerProvider whose exporter drops every span, so only the
  building of spans is measured, not a collector).
The cost per tool call is the wall time per turn above "telemetry off", divided by 5 calls.

    python bench/telemetry.py [--sessions 200] [--rounds 3]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CALLS_PER_TURN = 5


def _turns_module() -> Any:
    spec = importlib.util.spec_from_file_location("bench_turns", Path(__file__).with_name("turns.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Drop:
    """A span exporter that keeps nothing."""

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing to release."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing buffered."""
        return True


def _measure(turns: Any, sessions: int) -> tuple[float, float]:
    """(seconds per turn, runtime overhead per tool call in ms) of one run of bench/turns.py."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        asyncio.run(turns.main(sessions))
    text = out.getvalue()
    tps = float(re.search(r"turns per second\s+([\d.]+)", text).group(1))  # type: ignore[union-attr]
    overhead = re.search(r"runtime overhead per tool call\s+([\d.]+)", text)
    return 1.0 / tps, float(overhead.group(1)) if overhead else float("nan")


def per_event(samples: int = 20000) -> dict[str, float]:
    """Microseconds per `TraceWriter.emit` of a tool.call event in each mode (less sensitive to a
    loaded machine than whole turns)."""
    import time

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from skillc.runtime import telemetry
    from skillc.runtime.trace import TraceWriter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_Drop()))  # type: ignore[arg-type]
    event = dict(tool="cms_article_get", builtin=False, args={"articleId": 17}, ok=True, error=None, code=None,
                 evidence="e1", status="SUCCESS", business_ok=True, empty=False, replayed=False,
                 message='{"ok": true, "evidence": "e1", "data": {"id": 17, "title": "Spring launch"}}', next=None)
    modes: dict[str, Any] = {"chain off": (False, None), "telemetry off": (True, None),
                             "metrics on": (True, dict(spans=False)),
                             "spans + metrics on": (True, dict(tracer_provider=provider))}
    out: dict[str, float] = {}
    for name, (chain, enable) in modes.items():
        if enable is not None:
            telemetry.enable(**enable)
        try:
            best = float("inf")
            for _ in range(5):
                writer = TraceWriter(chain=chain)
                writer.emit("turn.started", session="s1", turn=1, message="m")
                start = time.perf_counter()
                for _ in range(samples // 5):
                    writer.emit("tool.call", session="s1", turn=1, task="t1", node="n1", **event)
                best = min(best, (time.perf_counter() - start) / (samples // 5))
            out[name] = best * 1e6
        finally:
            telemetry.disable()
    return out


def main(sessions: int, rounds: int) -> None:
    """Alternate the modes `rounds` times; print the best round of each, then per-event costs."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from skillc.runtime import telemetry
    from skillc.runtime.telemetry.audit import AuditChain

    turns = _turns_module()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_Drop()))  # type: ignore[arg-type]
    seal = AuditChain.seal

    def no_chain(self: AuditChain, event: dict[str, Any]) -> None:
        return None

    modes = {
        "audit chain off (before issue 17)": lambda: setattr(AuditChain, "seal", no_chain),
        "telemetry off (default: chain + audit events)": lambda: None,
        "metrics on": lambda: telemetry.enable(spans=False),
        "spans + metrics on (spans dropped)": lambda: telemetry.enable(tracer_provider=provider),
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in modes}
    _measure(turns, max(10, sessions // 10))  # warm-up: imports, compile caches
    for _ in range(rounds):
        for name, switch in modes.items():
            switch()
            try:
                results[name].append(_measure(turns, sessions))
            finally:
                telemetry.disable()
                AuditChain.seal = seal  # type: ignore[method-assign]
    # the best round of each mode: on a shared machine noise only ever adds time
    off = min(r[0] for r in results["telemetry off (default: chain + audit events)"])
    print(f"{'bench/turns.py, best of ' + str(rounds) + ' rounds of ' + str(sessions) + ' turns':52} "
          f"{'overhead/call':>14} {'Δ wall/call vs off':>20}")
    for name, runs in results.items():
        per_turn = min(r[0] for r in runs)
        overhead = min(r[1] for r in runs)
        delta = (per_turn - off) / CALLS_PER_TURN * 1000
        print(f"{name:52} {overhead:11.3f} ms {delta:+17.3f} ms")
    print()
    costs = per_event()
    print(f"{'one tool.call event through TraceWriter.emit':52} {'µs/event':>14} {'vs telemetry off':>20}")
    for name, micro in costs.items():
        print(f"{name:52} {micro:11.1f} µs {micro - costs['telemetry off']:+17.1f} µs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    main(args.sessions, args.rounds)
