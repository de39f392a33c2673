"""Every scenario under tests/scenarios/, examples/scenarios/ and examples/retail/scenarios/ passes
through the real runtime, and every event it writes is a valid `TraceEvent` (tests/helpers/trace_events.py).

A scenario file may carry `# expect-fail: <reason>` on its first line to pin a known-wrong
behaviour the other way round (the runner must report a failure): none do today.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helpers.trace_events import problems
from skillc.scenario.runner import report, run_scenario

ROOT = Path(__file__).resolve().parents[1]
FILES = (sorted((ROOT / "tests" / "scenarios").rglob("*.yaml")) + sorted((ROOT / "examples" / "scenarios").glob("*.yaml"))
         + sorted((ROOT / "examples" / "retail" / "scenarios").glob("*.yaml")))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_scenario(path: Path) -> None:
    result = asyncio.run(run_scenario(path))
    assert result.ok, report(result)
    bad = problems(result.events)  # every event it wrote is a typed TraceEvent (runtime/words/event_types.py)
    assert not bad, "\n".join(bad)
