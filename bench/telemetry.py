"""What telemetry costs per tool call (not a test; prints one table measured in one run).

Runs `bench/turns.py` (one session, turns of 5 business tool calls; its runtime overhead per tool
call around turn 10, model and MCP time taken out) in rounds, alternating:
- the audit chain off (`prev`/`hash` not computed): the baseline before issue 17;
- telemetry off (the default: the chain and audit events only);
- metrics on (`telemetry.build(spans=False)` installed on the runtime);
- spans and metrics on (an SDK TracerProvider whose exporter drops every span, so only the
  building of spans is measured, not a collector).
The cost per tool call is the overhead above "telemetry off". A second table times one tool.call
event through the trace writer in each mode (steadier on a loaded machine).

    python bench/telemetry.py [--turns 30] [--rounds 3]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib.util
import io
import re
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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


LABEL = "runtime overhead per tool call, at turn 10"


def overhead_at_turn_10(output: str) -> float:
    """The figure bench/turns.py prints on its LABEL line (ms per tool call)."""
    found = re.search(re.escape(LABEL) + r"\s+([\d.]+)", output)
    if found is None:
        raise SystemExit(f"bench/turns.py no longer prints {LABEL!r}:\n{output}")
    return float(found.group(1))


def _measure(turns: Any, played: int) -> float:
    """Runtime overhead per tool call (ms) at turn 10 of one run of bench/turns.py (the median of
    its interleaved rounds, model and MCP time taken out)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        asyncio.run(turns.main(played, 5, 5))  # a long session of `played` turns, 5 new sessions, 5 rounds
    return overhead_at_turn_10(out.getvalue())


def per_event(samples: int = 20000) -> dict[str, float]:
    """Microseconds per `TraceWriter.emit` of a tool.call event in each mode (less sensitive to a
    loaded machine than whole turns)."""
    import time

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from skillc.runtime import telemetry
    from skillc.runtime.telemetry.trace import TraceWriter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_Drop()))  # type: ignore[arg-type]
    call = dict(type="tool.call", node="n1", tool="cms_article_get", builtin=False, args={"articleId": 17}, ok=True, error=None, code=None,
                 evidence="e1", status="SUCCESS", business_ok=True, empty=False, replayed=False,
                 message='{"ok": true, "evidence": "e1", "data": {"id": 17, "title": "Spring launch"}}', next=None)
    modes: dict[str, Any] = {"chain off": (False, None), "telemetry off": (True, None),
                             "metrics on": (True, dict(spans=False)),
                             "spans + metrics on": (True, dict(tracer_provider=provider))}
    out: dict[str, float] = {}
    for name, (chain, enable) in modes.items():
        gc.collect()
        tel = telemetry.build(**enable) if enable is not None else None
        try:
            best = float("inf")
            for _ in range(5):
                writer = TraceWriter(chain=chain, observers=[tel] if tel is not None else ())
                writer.emit({"type": "turn.started", "message": "m"}, session="s1", turn=1)
                start = time.perf_counter()
                for _ in range(samples // 5):
                    writer.emit(call, session="s1", turn=1, task="t1")
                best = min(best, (time.perf_counter() - start) / (samples // 5))
            out[name] = best * 1e6
        finally:
            if tel is not None:
                tel.close()
    return out


def main(played: int, rounds: int) -> None:
    """Alternate the modes `rounds` times; print the median round of each with its spread, then
    per-event costs."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from skillc.runtime import telemetry
    from skillc.runtime.telemetry.audit import AuditChain

    costs = per_event()  # first: a heap grown by the turn runs makes the collector dominate
    turns = _turns_module()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_Drop()))  # type: ignore[arg-type]
    seal = AuditChain.seal

    def no_chain(self: AuditChain, event: dict[str, Any]) -> None:
        return None

    from skillc.runtime import session as session_mod

    plain = session_mod.Runtime

    def observed(**build: Any) -> None:
        """bench/turns.py's runtimes get telemetry installed, as open_runtime would."""
        tel = telemetry.build(**build)

        class Observed(plain):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                tel.install(self)

        session_mod.Runtime = Observed  # type: ignore[misc]

    modes = {
        "audit chain off (before issue 17)": lambda: setattr(AuditChain, "seal", no_chain),
        "telemetry off (default: chain + audit events)": lambda: None,
        "metrics on": lambda: observed(spans=False),
        "spans + metrics on (spans dropped)": lambda: observed(tracer_provider=provider),
    }
    results: dict[str, list[float]] = {name: [] for name in modes}
    _measure(turns, 15)  # warm-up: imports, compiled studio caches
    for _ in range(rounds):
        for name, switch in modes.items():
            switch()
            try:
                results[name].append(_measure(turns, played))
            finally:
                session_mod.Runtime = plain  # type: ignore[misc]
                AuditChain.seal = seal  # type: ignore[method-assign]
    # the median round of each mode (the modes alternate, so load falls on all alike), with its spread
    off = statistics.median(results["telemetry off (default: chain + audit events)"])
    print(f"{'bench/turns.py at turn 10, median of ' + str(rounds) + ' runs':52} {'overhead/call':>14} "
          f"{'vs off':>12} {'spread':>18}")
    for name, runs in results.items():
        mid = statistics.median(runs)
        print(f"{name:52} {mid:11.3f} ms {mid - off:+9.3f} ms {min(runs):8.3f}-{max(runs):.3f} ms")
    print()
    print(f"{'one tool.call event through TraceWriter.emit':52} {'µs/event':>14} {'vs telemetry off':>20}")
    for name, micro in costs.items():
        print(f"{name:52} {micro:11.1f} µs {micro - costs['telemetry off']:+17.1f} µs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30, help="turns per run of bench/turns.py")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    main(args.turns, args.rounds)
