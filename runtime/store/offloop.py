"""Store calls off the event loop: the runtime's async code reaches the store through `call` and
`unit`, never by calling it directly.

A store with an async face (PostgreSQL: psycopg's `AsyncConnectionPool`, `store.coroutine` and
`store.unit_async`) is awaited natively. Any other store (SQLite's one synchronous connection) is
called on the store's own threads (`store.threads`: one for SQLite, which serializes anyway), so
a store whose database is slow or down cannot starve the default executor other code uses, and
the loop never waits on the database either way. A store that can tell a call that would wait
from one that would not (SQLite: `without_waiting`) runs the second kind on the loop itself,
where a thread handoff would cost more than the call, and hands the first to its thread. A unit of work for a threaded store gathers its
writes in the coroutine and applies them in one `store.unit` on a store thread.
"""
from __future__ import annotations

import asyncio
import functools
import threading
import weakref
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, Callable, TypeVar

T = TypeVar("T")

# One executor per live store, dropped with its store (weak keys): bounded by the stores open.
# (Every store is weakly referenceable; an id()-keyed fallback for one that was not grew without
# bound and could hand a new store the threads of a dead one whose id it reused.)
_EXECUTORS: "weakref.WeakKeyDictionary[Any, ThreadPoolExecutor]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def executor_of(store: Any) -> ThreadPoolExecutor:
    """The store's threads, made on first use (`store.threads` of them, 4 when it does not say)."""
    with _LOCK:
        found = _EXECUTORS.get(store)
        if found is not None:
            return found
        made = ThreadPoolExecutor(max_workers=max(1, int(getattr(store, "threads", 4) or 4)),
                                  thread_name_prefix="skillc-store")
        _EXECUTORS[store] = made  # TypeError for a store that cannot be weakly referenced
        return made


def native(store: Any) -> bool:
    """True when `store` has an async face (`coroutine`, `unit_async`): its calls are awaited,
    never run on a thread."""
    return getattr(store, "coroutine", None) is not None


async def call(store: Any, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` awaited: natively when `fn` is a method of `store` that its async
    face has, else on one of `store`'s threads; the loop goes on meanwhile. The call is not
    cancelled with the awaiting task: it ends on its own, bounded by the store's timeouts, and its
    result is dropped."""
    native = getattr(store, "coroutine", None)
    if native is not None and getattr(fn, "__self__", None) is store:
        coro = native(fn.__name__, *args, **kwargs)
        if coro is not None:
            return await coro  # type: ignore[no-any-return]
    loop = asyncio.get_running_loop()
    now = getattr(store, "without_waiting", None)
    if now is not None and _bounded(store, fn):
        done, value = now(fn, args, kwargs)
        if store.checkpoint_due():  # its fsyncs may wait: on the store's thread, not awaited
            try:
                loop.run_in_executor(executor_of(store), store.checkpoint)
            except RuntimeError:  # the store's threads were let go: it is closing
                pass
        if done:
            return value  # type: ignore[no-any-return]
    return await loop.run_in_executor(executor_of(store), functools.partial(fn, *args, **kwargs))


# Store methods whose cost grows with the whole store, not with one session: never on the loop.
_LONG = frozenset({"sessions", "raw"})


def bounded(fn: Callable[..., T]) -> Callable[..., T]:
    """Mark `fn` (not a store method) as a few store calls bounded like one, which a store may run
    on the loop when they cannot wait (e.g. a nonce claimed, then one read)."""
    fn.bounded_store_call = True  # type: ignore[attr-defined]
    return fn


def _bounded(store: Any, fn: Callable[..., Any]) -> bool:
    """A call that may run on the loop when it cannot wait: one of the store's own methods (but
    those that read the whole store), or one marked `bounded`."""
    if getattr(fn, "__self__", None) is store:
        return fn.__name__ not in _LONG
    return getattr(fn, "bounded_store_call", False) is True


class _Gathered:
    """A unit's writes gathered in the coroutine, for a threaded store (see `unit`)."""

    def __init__(self) -> None:
        self.ops: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Callable[..., None]:
        if not name.startswith("put_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self.ops.append((name, args, kwargs))

    @bounded
    def apply(self, store: Any, session: str | None, options: dict[str, Any]) -> None:
        with store.unit(session, **options) as uow:
            for name, args, kwargs in self.ops:
                getattr(uow, name)(*args, **kwargs)


@asynccontextmanager
async def unit(store: Any, session: str | None = None, *, holder: str | None = None, expires: float | None = None,
               fence: int | None = None) -> AsyncIterator[Any]:
    """A unit of work (see base.Store.unit) for a coroutine: the `put_*` calls inside the block are
    committed together when it ends, without the loop waiting on the database."""
    native = getattr(store, "unit_async", None)
    if native is not None:
        async with native(session, holder=holder, expires=expires, fence=fence) as uow:
            yield uow
        return
    gathered = _Gathered()
    yield gathered
    await call(store, gathered.apply, store, session, {"holder": holder, "expires": expires, "fence": fence})


def shutdown(store: Any) -> None:
    """Let the store's threads go (after the store is closed); calls still running finish."""
    with _LOCK:
        found = _EXECUTORS.pop(store, None)
    if found is not None:
        found.shutdown(wait=False)
