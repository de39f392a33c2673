"""The public conformance scenarios pass through `skillc scenario run`, and check.py agrees."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skillc.main import run as skillc

SHARED = Path(__file__).resolve().parents[2] / "shared" / "conformance"
PUBLIC = sorted((SHARED / "public").glob("*.yaml"))


def test_public_scenarios_exist() -> None:
    assert PUBLIC, f"no public scenarios under {SHARED}"


@pytest.mark.parametrize("scenario", PUBLIC, ids=[p.stem for p in PUBLIC])
def test_public_scenario_passes_and_checker_agrees(scenario: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "trace.jsonl"
    status = skillc(["scenario", "run", str(scenario), "--trace", str(trace)])
    out = capsys.readouterr().out
    assert status == 0, out
    checked = subprocess.run([sys.executable, str(SHARED / "check.py"), str(scenario), str(trace)],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
