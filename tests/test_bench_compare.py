"""bench/compare.py reads benchmark tables by label and judges the working tree against a base."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "bench" / "compare.py"
_spec = importlib.util.spec_from_file_location("bench_compare", _PATH)
assert _spec is not None and _spec.loader is not None
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)

CHAIN = """skillc bench/chain.py  (n=300, best of 3; python 3.11.7)
  chain overhead, read (run_chain, instant stub)              45.5 µs
  in-process MCP round trip, read (canned server)            531.0 µs   chain/rt =   8.6%
  ArgPolicy compiled required-field check                      1.5 µs   jsonschema/check =  20.9x
  (chain read median/best = 1.02: values near 1 mean a quiet machine)

target chain overhead <= 5% of the in-process round trip: 8.0%  MISSED
   ncalls  tottime  percall  cumtime  percall filename:lineno(function)
      600    0.005    0.000    0.013    0.000 /work/main/runtime/border.py:73(check)
"""
TURNS = """sessions (1 turn, 1 task, 5 tool calls)              200
turns per second                                        153.0
runtime overhead per tool call                          0.506 ms   (new sessions; target < 1 ms)
memory kept per turn (tracemalloc, 200 turns)           10.92 KiB
"""


def test_rows_are_read_by_label_with_value_and_unit() -> None:
    rows = compare.rows(CHAIN)
    assert rows == {"chain overhead, read (run_chain, instant stub)": (45.5, "µs"),
                    "in-process MCP round trip, read (canned server)": (531.0, "µs"),
                    "ArgPolicy compiled required-field check": (1.5, "µs")}
    assert compare.rows(TURNS) == {"sessions (1 turn, 1 task, 5 tool calls)": (200.0, ""),
                                   "turns per second": (153.0, ""),
                                   "runtime overhead per tool call": (0.506, "ms"),
                                   "memory kept per turn (tracemalloc, 200 turns)": (10.92, "KiB")}


@pytest.mark.parametrize("label, unit, base, head, expected", [
    ("chain overhead, write", "µs", 133.6, 122.3, " 1.09x better"),
    ("chain overhead, read", "µs", 26.4, 33.0, " 0.80x worse"),
    ("turns per second", "", 141.8, 153.0, " 1.08x better"),
    ("turns per second", "", 150.0, 100.0, " 0.67x worse"),
    ("sessions (1 turn, 1 task, 5 tool calls)", "", 200, 200, ""),
    ("memory kept per turn", "KiB", 12.0, 11.0, ""),
])
def test_the_verdict_knows_which_way_is_better(label: str, unit: str, base: float, head: float,
                                               expected: str) -> None:
    assert compare.verdict(label, unit, base, head) == expected


def test_a_row_is_summarised_by_its_median_not_its_best_round() -> None:
    """One lucky round (a quiet moment) must not decide the comparison: median and spread."""
    assert compare.summary([120.0, 45.0, 118.0, 119.0, 300.0]) == (119.0, 45.0, 300.0)
