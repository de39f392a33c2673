"""A skipped test says why, and a run's summary counts the skips per reason: a fresh clone has no
shared conformance files beside it, and `pytest -q` alone said only "82 skipped"."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_summary_says_why_tests_were_skipped(tmp_path: Path) -> None:
    env = {**os.environ, "SKILLC_CONFORMANCE_DIR": str(tmp_path / "absent")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests/test_conformance_public.py"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any("why tests were skipped" in line for line in lines), done.stdout
    reason = [line for line in lines if " skipped: needs the shared conformance files" in line]
    assert len(reason) == 1 and reason[0].split()[0].isdigit(), done.stdout
    assert "$SKILLC_CONFORMANCE_DIR" in reason[0] and "not part of this repository" in reason[0]
