"""A reply acknowledged by one process while the session's next turn already runs in another
(two `skillc serve` workers, turns alternating): the next turn waits for that acknowledgement
instead of giving the reply again; a reply nobody acknowledges is still given with the next turn.

bench/scale.py's alternating two-worker row showed 2-4 turns in 200 as "booked\\n\\nbooked":
the worker that served turn N stores its acknowledgement after the response ended, and turn
N+1 on the other worker took the lease first and saw turn N's reply undelivered.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from pg_cluster import BACKENDS
from helpers.ledger import FINISH, PLATFORM, POST, USER
from test_durable_session import BYPASS, World, compiled  # noqa: F401  (a fixture)

SECOND = "Book 421 under reference R-7002"
POST2 = {"call": {"tool": "ledger_post", "args": {"ref": "R-7002", "amount": 421}}}
FINISH2 = {"call": {"tool": "builtin_node_finish", "args": {"output": "Booked R-7002"}}}


def _next_turn_elsewhere(world: World, acknowledged: bool) -> tuple[str, str]:
    """Turn 1 on runtime A (a server: it acknowledges delivery), turn 2 on runtime B over the same
    store; A's acknowledgement (when `acknowledged`) is stored only once B has taken the lease."""

    async def go() -> tuple[str, str]:
        a_rt, a_model, a_gw = await world.runtime()
        b_rt, b_model, b_gw = await world.runtime()
        a_rt.acknowledges_delivery = b_rt.acknowledges_delivery = True
        try:
            a = await a_rt.open_session(PLATFORM, session_id="s1")
            a_model.load_turn([POST, FINISH])
            first = await a.send(USER)
            b = await b_rt.open_session(PLATFORM, session_id="s1")
            leased = asyncio.Event()
            acquire = b_rt.store.acquire_lease

            def spy(*args: Any, **kwargs: Any) -> Any:
                lease = acquire(*args, **kwargs)
                if not acknowledged:
                    world.now[0] += 3600  # long after: no acknowledgement is coming
                b_rt.store.acquire_lease = acquire
                leased.set()
                return lease

            b_rt.store.acquire_lease = spy
            b_model.load_turn([POST2, FINISH2])
            second = asyncio.ensure_future(b.send(SECOND))
            await asyncio.wait_for(leased.wait(), 60)
            if acknowledged:
                await a.acknowledge(1)  # A's response ended: the client has read turn 1's reply
            return first.text, (await asyncio.wait_for(second, 60)).text
        finally:
            for rt, gw in ((a_rt, a_gw), (b_rt, b_gw)):
                await gw.aclose()
                rt.store.close()  # a PostgreSQL store's pool, not left to the garbage collector

    return asyncio.run(go())


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reply_acknowledged_meanwhile_elsewhere_is_not_given_again(compiled: Path, tmp_path: Path,  # noqa: F811
                                                                      backend: str) -> None:
    first, second = _next_turn_elsewhere(World(compiled, tmp_path, BYPASS, backend), acknowledged=True)
    assert "R-7001" in first and "R-7001" not in second
    assert "R-7002" in second


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reply_never_acknowledged_is_given_with_the_next_turn_elsewhere(compiled: Path, tmp_path: Path,  # noqa: F811
                                                                           backend: str) -> None:
    first, second = _next_turn_elsewhere(World(compiled, tmp_path, BYPASS, backend), acknowledged=False)
    assert second.startswith(first + "\n\n") and "R-7002" in second
