"""bench/chain_rules.py times one rule-checked call over and over: each call must meet the session
as the last one found it, or the figure is of a session growing by a record per call (it grew to
~27,000 records and dirty entries in one full run)."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from helpers.by_path import load_module

_BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str) -> Any:
    return load_module(_BENCH / f"{name}.py", f"bench_{name}", search=_BENCH)


def test_repeated_calls_leave_the_session_as_they_found_it(tmp_path: Path) -> None:
    bench = _load("chain_rules")

    async def go() -> list[tuple[int, int]]:
        calls, env = await bench.fixtures(tmp_path)
        sizes = []
        for _ in range(3):
            for call in calls.values():
                for _ in range(5):
                    await call()
            sizes.append((len(env.evidence), len(env.dirty)))
        return sizes

    sizes = asyncio.run(go())
    assert sizes[0][0] > 0 and len(set(sizes)) == 1, sizes
