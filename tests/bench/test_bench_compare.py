"""bench/compare.py reads benchmark tables by label and judges the working tree against a base."""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers.by_path import load_module

_PATH = Path(__file__).resolve().parents[2] / "bench" / "compare.py"
compare = load_module(_PATH, "bench_compare")

CHAIN = """skillc bench/chain.py  (n=300, best of 3; python 3.11.7)
  chain overhead, read (run_chain, instant stub)              45.5 µs
  in-process MCP round trip, read (canned server)            531.0 µs   chain/rt =   8.6%
  ArgPolicy compiled required-field check                      1.5 µs   jsonschema/check =  20.9x
  (chain read median/best = 1.02: values near 1 mean a quiet machine)

target chain overhead <= 5% of the in-process round trip: 8.0%  MISSED
   ncalls  tottime  percall  cumtime  percall filename:lineno(function)
      600    0.005    0.000    0.013    0.000 /work/main/runtime/text/border.py:73(check)
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


RULES = """skillc bench/chain_rules.py  (n=200 per round, median of 5 interleaved rounds; python 3.11.7)
  call with  0 rules (chain alone, instant stub)        79.5 µs   (78.8-80.9)    1.00x of none per round (1.00-1.00)
  call with  5 rules (chain alone, instant stub)        98.1 µs   (96.6-98.6)    1.22x of none per round (1.22-1.23)
  call with 20 rules (chain alone, instant stub)       117.5 µs   (115.8-118.1)    1.47x of none per round (1.46-1.48)
  call with  5 rules (chain + in-process MCP round trip)      1605.2 µs   (1577.1-1729.8)    1.04x of none per round (1.02-1.06)
target 5 rules within 1.2x of none (chain alone): 1.22x per round (1.22-1.23; ratio of medians 1.23x)  MISSED
"""


def test_rows_whose_labels_hold_numbers_are_told_apart_by_the_whole_label() -> None:
    """bench/chain_rules.py's rows share "call with" and differ by a count inside the label: each
    is its own row, and its ratio to no rules a row beside it."""
    assert compare.rows(RULES) == {
        "call with  0 rules (chain alone, instant stub)": (79.5, "µs"),
        "call with  0 rules (chain alone, instant stub): x of none per round": (1.00, "x"),
        "call with  5 rules (chain alone, instant stub)": (98.1, "µs"),
        "call with  5 rules (chain alone, instant stub): x of none per round": (1.22, "x"),
        "call with 20 rules (chain alone, instant stub)": (117.5, "µs"),
        "call with 20 rules (chain alone, instant stub): x of none per round": (1.47, "x"),
        "call with  5 rules (chain + in-process MCP round trip)": (1605.2, "µs"),
        "call with  5 rules (chain + in-process MCP round trip): x of none per round": (1.04, "x"),
    }


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


SERVE = """skillc serve vs in-process API: 100 turns per row and round (new session each; 2 tool calls per turn, 3 warm-up turns uncounted), example studio, in-process demo CMS, instant model; median (min-max) of 3 alternating rounds

sessions | side       |                turns/s |                 p50 ms |                 p99 ms
--------------------------------------------------------------------------------------------------
       1 | in-process |   385.41 (346.83-400.29) |       2.32 (2.31-2.72) |       6.68 (6.60-7.09)
       1 | served     |    102.75 (96.37-103.90) |       7.80 (7.65-8.75) |    15.96 (14.38-18.57)
       8 | served     |    107.51 (99.85-108.25) |    16.78 (16.52-17.01) |    28.95 (28.09-35.75)

added latency per tool call (sequential, paired turns: served − in-process, / 2, per round): p50 2.67 (2.54-3.21) ms, p99 4.44 (3.85-5.99) ms (target p50 <= 1 ms)
added CPU per tool call (sequential, the server process's CPU per turn − the in-process turn's, / 2, per round): 2.10 (2.07-2.39) ms
client CPU per served turn (lean client, this process's CPU during the served turns of the sequential row, per round): 0.35 (0.33-0.36) ms
mean turn: in-process 2.66 ms, served 9.00 ms
"""


def test_serve_table_and_sentences_are_read_by_label() -> None:
    """bench/serve.py prints a `|` table and sentences of figures: both are rows to compare."""
    rows = compare.rows(SERVE)
    assert rows == {
        "sessions 1, in-process: turns/s": (385.41, ""), "sessions 1, in-process: p50": (2.32, "ms"),
        "sessions 1, in-process: p99": (6.68, "ms"),
        "sessions 1, served: turns/s": (102.75, ""), "sessions 1, served: p50": (7.80, "ms"),
        "sessions 1, served: p99": (15.96, "ms"),
        "sessions 8, served: turns/s": (107.51, ""), "sessions 8, served: p50": (16.78, "ms"),
        "sessions 8, served: p99": (28.95, "ms"),
        "added latency per tool call: p50": (2.67, "ms"), "added latency per tool call: p99": (4.44, "ms"),
        "added CPU per tool call": (2.10, "ms"),
        "client CPU per served turn": (0.35, "ms"),
        "mean turn: in-process": (2.66, "ms"), "mean turn: served": (9.00, "ms"),
    }
    # turns per second is better higher, a latency lower
    assert compare.verdict("sessions 1, served: turns/s", "", 100.0, 110.0) == " 1.10x better"
    assert compare.verdict("sessions 1, served: p50", "ms", 8.0, 10.0) == " 0.80x worse"


def test_serve_rows_come_out_of_the_real_script_format() -> None:
    """The labels above are what bench/serve.py's own print statements produce (no drift)."""
    source = (_PATH.parent / "serve.py").read_text(encoding="utf-8")
    assert "{'sessions':>8} | {'side':<10} | {'turns/s':>22} | {'p50 ms':>22} | {'p99 ms':>22}" in source
    assert "added latency per tool call (sequential, paired turns: served − in-process" in source
    assert "mean turn: in-process" in source and "client CPU per served turn (" in source
