"""A store's own event loop: the thread on which an async database driver's connections live.

The PostgreSQL store runs psycopg's `AsyncConnectionPool` here. Its connections belong to one
loop, while the store is used from several: the runtime's (`skillc serve`, `Session`), and plain
threads with no loop at all (`skillc chat`'s helpers, `skillc audit`, scenarios, tests). So the
pool lives on a loop of its own, and

- a coroutine of any other loop awaits a store call (`submit`) without blocking its loop: the
  call's coroutine is scheduled here and its result handed back when done;
- synchronous code waits for it (`run`), as it would for any blocking call.

A call is not cancelled with the task awaiting it: a unit of work cut between its COMMIT and the
COMMIT's answer would leave its outcome unknown. It ends on its own, bounded by the store's
timeouts, and its result is dropped.
"""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class StoreLoop:
    """An event loop running on a daemon thread, until `close`."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def on_loop(self) -> bool:
        """True when called from this loop's own thread (where waiting on it would deadlock)."""
        return threading.current_thread() is self._thread

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the store's loop and wait for its result (synchronous callers)."""
        if self.on_loop():
            coro.close()
            raise RuntimeError("a synchronous store call from the store's own loop would wait on itself")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def submit(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` run on the store's loop; the calling loop goes on meanwhile."""
        if asyncio.get_running_loop() is self.loop:
            return await coro
        future = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))
        return await asyncio.shield(future)  # not cancelled with the awaiting task (see above)

    def close(self) -> None:
        """Cancel what is still pending on the loop, wait for it, stop the loop and let its
        thread end."""
        if self.loop.is_closed():
            return
        if self.on_loop():  # cannot wait on itself: stop, and the thread's end leaves it open
            self.loop.stop()
            return
        if self._thread.is_alive():
            try:
                asyncio.run_coroutine_threadsafe(_cancel_pending(), self.loop).result(5.0)
            except TimeoutError:  # a task that will not end: stop the loop all the same
                pass
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5.0)
        if not self._thread.is_alive():
            self.loop.close()


async def _cancel_pending() -> None:
    """Cancel every other task of the running loop and wait for them to end, as `asyncio.run` does
    on its way out: a task a closed loop still holds is destroyed pending when it is collected,
    and asyncio logs that as an error in whatever runs then."""
    me = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not me]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()
