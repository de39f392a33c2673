"""bench/telemetry.py drives bench/turns.py and reads its turn-10 figure: the two must keep agreeing
(the call's arguments and the printed label), or the telemetry bench breaks unnoticed."""
from __future__ import annotations

from pathlib import Path
from typing import Any
from helpers.by_path import load_module

_BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str) -> Any:
    return load_module(_BENCH / f"{name}.py", f"bench_{name}")


def test_the_telemetry_bench_reads_a_real_turns_run() -> None:
    telemetry = _load("telemetry")
    figure = telemetry._measure(telemetry._turns_module(), 12)
    assert 0 < figure < 1000  # ms per tool call, model and MCP time taken out


def test_a_missing_label_is_a_clear_stop() -> None:
    telemetry = _load("telemetry")
    try:
        telemetry.overhead_at_turn_10("turns per second  12.0\n")
    except SystemExit as stop:
        assert telemetry.LABEL in str(stop)
    else:
        raise AssertionError("no figure was read, and nothing said so")
