"""bench/replay.py measures what its docstring says: each benchmark conversation has 20 calls
that replay judges as lookups allowed, an invented id refused, a confirmed void asked for
approval and its repeat replayed (no timing here: benchmarks are not tests)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from skillc.runtime.replay import JudgeOptions, judge
from skillc.runtime.replay.openai_format import _conversation
from skillc.runtime.words.vocab import Verdict
from helpers.by_path import load_module

BENCH = Path(__file__).resolve().parents[2] / "bench" / "replay.py"


def test_the_benchmark_conversation_is_judged_as_described(compiled_example: Any) -> None:
    bench = load_module(BENCH, "bench_replay")
    record = json.loads(json.dumps(bench.conversation(3)))
    conv = _conversation("bench.jsonl", "bench", 1, record, None)
    result = asyncio.run(judge(compiled_example, conv, JudgeOptions(agent="billing", platform=bench.PLATFORM)))  # type: ignore[arg-type]
    verdicts = [c.verdict for c in result.calls]
    assert len(verdicts) == bench.CALLS_PER_CONVERSATION
    assert verdicts == [Verdict.ALLOWED] * 16 + [Verdict.REFUSED, Verdict.APPROVAL_ASKED, Verdict.REPLAYED,
                                                 Verdict.ALLOWED]
    assert result.calls[17].after_confirmation is not None and result.calls[17].after_confirmation["business_ok"]
    assert [c.skill for c in result.calls[:6]] == ["inv.order.lookup"] * 6
