"""The public conformance scenarios pass through `skillc scenario run`, and check.py agrees; every
event of their traces is a valid `TraceEvent` (tests/helpers/trace_events.py).

The scenarios and check.py live beside the repository; without them these tests skip (see
tests/helpers/conformance.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from helpers.conformance import REASON, public_scenarios, run_checker
from helpers.trace_events import problems
from skillc.runtime.telemetry.trace import iter_events
from skillc.main import run as skillc

PUBLIC = public_scenarios()


def test_public_scenarios_exist(conformance: Path) -> None:
    assert PUBLIC, f"no public scenarios under {conformance}"


@pytest.mark.skipif(not PUBLIC, reason=REASON)
@pytest.mark.parametrize("scenario", PUBLIC, ids=[p.stem for p in PUBLIC])
def test_public_scenario_passes_and_checker_agrees(scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "trace.jsonl"
    status = skillc(["scenario", "run", str(scenario), "--trace", str(trace)])
    out = capsys.readouterr().out
    assert status == 0, out
    checked = run_checker(scenario, trace)
    assert checked is not None and checked.returncode == 0, checked and checked.stdout + checked.stderr
    bad = problems(ev for _, ev in iter_events(str(trace)))  # each a typed TraceEvent (runtime/words/event_types.py)
    assert not bad, "\n".join(bad)
