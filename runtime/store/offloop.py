"""Store calls off the event loop: the runtime's async code reaches the (synchronous, thread-safe)
store through `call`, which runs the call on the store's own threads.

Why threads and not an async driver: one store implementation serves the asyncio runtime
(`skillc serve`, `Session`), the synchronous tools (`skillc chat`'s helpers, `skillc audit`,
scenarios, tests) and both backends alike; what the event loop must never do is wait on the
database, and a call on a thread never makes it wait. Each store has its own small pool of
threads (`store.threads`: one for SQLite, whose one connection serializes anyway; one per pooled
connection for PostgreSQL), so a session stuck on a row lock occupies one thread, never the loop,
and a store whose database is down cannot starve the default executor other code uses.
"""
from __future__ import annotations

import asyncio
import functools
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_EXECUTORS: "weakref.WeakKeyDictionary[Any, ThreadPoolExecutor]" = weakref.WeakKeyDictionary()
_BY_ID: dict[int, ThreadPoolExecutor] = {}  # stores that cannot be weakly referenced
_LOCK = threading.Lock()


def executor_of(store: Any) -> ThreadPoolExecutor:
    """The store's threads, made on first use (`store.threads` of them, 4 when it does not say)."""
    with _LOCK:
        try:
            found = _EXECUTORS.get(store)
        except TypeError:
            found = _BY_ID.get(id(store))
        if found is not None:
            return found
        made = ThreadPoolExecutor(max_workers=max(1, int(getattr(store, "threads", 4) or 4)),
                                  thread_name_prefix="skillc-store")
        try:
            _EXECUTORS[store] = made
        except TypeError:
            _BY_ID[id(store)] = made
        return made


async def call(store: Any, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` on one of `store`'s threads; the loop goes on meanwhile. The call is
    not cancelled with the awaiting task (a thread cannot be): it ends on its own, bounded by the
    store's timeouts, and its result is dropped."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor_of(store), functools.partial(fn, *args, **kwargs))


def shutdown(store: Any) -> None:
    """Let the store's threads go (after the store is closed); calls still running finish."""
    with _LOCK:
        try:
            found = _EXECUTORS.pop(store, None)
        except TypeError:
            found = _BY_ID.pop(id(store), None)
    if found is not None:
        found.shutdown(wait=False)
