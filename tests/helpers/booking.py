"""Booking turns of the ledger studio (the write, then finish), counted by a test: what a turn sends
to the store or how often it leaves the event loop, read around each turn's `send`."""
from __future__ import annotations

import asyncio
from typing import Any, Callable, TypeVar

from helpers.ledger import PLATFORM

T = TypeVar("T")


def play_bookings(world: Any, count: int, *, clear: Callable[[], None], record: Callable[[], T],
                  start: Callable[[Any], None] = lambda runtime: None, new_sessions: bool = False) -> list[T]:
    """Play `count` booking turns of `world` (test_durable_session.World): `start(runtime)` once,
    then per turn `clear()` just before it and `record()` just after it. One session "s1" opened
    before the first turn, or (`new_sessions`) a new session per turn, opened inside the counted part."""

    async def go() -> list[T]:
        runtime, model, gateway = await world.runtime()
        start(runtime)
        out: list[T] = []
        try:
            session = None if new_sessions else await runtime.open_session(PLATFORM, session_id="s1")
            for n in range(count):
                ref = f"R-80{n:02d}"
                if new_sessions:
                    clear()
                    session = await runtime.open_session(PLATFORM, session_id=f"s{n}")
                model.load_turn([{"call": {"tool": "ledger_post", "args": {"ref": ref, "amount": 10 + n}}},
                                 {"call": {"tool": "builtin_node_finish", "args": {"output": f"Booked {ref}"}}}])
                if not new_sessions:
                    clear()
                assert session is not None
                reply = await session.send(f"Book {10 + n} under reference {ref}")
                assert f"Booked {ref}" in reply.text, reply.text
                out.append(record())
        finally:
            await gateway.aclose()
            await runtime.aclose()
        return out

    return asyncio.run(go())
