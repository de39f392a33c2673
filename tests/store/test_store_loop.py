"""The store's own event loop (runtime/store/storeloop.py) closes cleanly: a task still pending on
it (a pool's background worker, a call whose caller gave up) is cancelled and awaited before the
loop closes, not left to be garbage-collected later with asyncio's "Task was destroyed but it is
pending!" logged in whatever runs then (it once failed an unrelated test that checks its log)."""
from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from skillc.runtime.store.storeloop import StoreLoop


def test_closing_cancels_and_awaits_what_is_still_pending(caplog: pytest.LogCaptureFixture) -> None:
    loop = StoreLoop("test-store-loop")
    cancelled: list[bool] = []

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    async def start() -> None:
        asyncio.get_running_loop().create_task(forever())  # nobody keeps it: the loop alone knows it
        await asyncio.sleep(0)

    loop.run(start())
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        loop.close()
        gc.collect()
    assert loop.loop.is_closed()
    assert cancelled == [True]
    # only this loop's task counts: a store another test left to the collector may log its own
    assert not [r for r in caplog.records if "destroyed" in r.getMessage() and "forever" in r.getMessage()], caplog.text


def test_a_second_close_is_harmless() -> None:
    loop = StoreLoop("test-store-loop")
    assert loop.run(asyncio.sleep(0, result=7)) == 7
    loop.close()
    loop.close()
    assert loop.loop.is_closed()
