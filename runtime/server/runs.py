"""The run registry: every AG-UI run's encoded events, kept so a stream can be followed again.

A run is executed by the server, not by the HTTP request that asked for it: the request only
follows the run's log. So a client that disconnects loses nothing (the turn completes), a
repeated `runId` re-streams the same log instead of running twice, and `Last-Event-ID` resumes
a stream where it broke (docs/API.md §4).
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("skillc.server")


LINGER = 0.02  # seconds a follower lets a running run go on before writing what it added


@dataclass
class RunLog:
    """One run: its thread, owner, encoded events (JSON text, in order) and whether it ended."""

    run_id: str
    thread_id: str
    owner: str
    events: list[str] = field(default_factory=list)
    done: bool = False
    task: asyncio.Task[None] | None = None
    # the turn's acknowledgement (Session.acknowledge of its reply), called once a client has
    # read the stream to RUN_FINISHED; None when there is nothing to acknowledge (or it was)
    acknowledge: Callable[[], Awaitable[None]] | None = None
    finished: bool = False  # its last event is RUN_FINISHED (the mapper says so: no event is parsed)
    # followers waiting: woken by the next event (`_waiters`) or by the run's end only (`_enders`);
    # an event nobody waits for wakes nothing
    _waiters: list[asyncio.Future[None]] = field(default_factory=list, repr=False)
    _enders: list[asyncio.Future[None]] = field(default_factory=list, repr=False)

    def append(self, data: str) -> None:
        """Add one encoded event and wake every follower."""
        self.events.append(data)
        if self._waiters:
            self._wake(self._waiters)

    def close(self) -> None:
        """The run ended: followers drain what is left and stop."""
        self.done = True
        self.wake()

    def wake(self) -> None:
        """Wake every follower (an event, the end, or a follower's client gone)."""
        self._wake(self._waiters)
        self._wake(self._enders)

    @staticmethod
    def _wake(futures: list[asyncio.Future[None]]) -> None:
        for fut in futures:
            if not fut.done():
                fut.set_result(None)
        futures.clear()

    async def _wait(self, futures: list[asyncio.Future[None]], timeout: float | None) -> None:
        """Until woken through `futures` or `timeout` seconds passed (one timer, no extra task)."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        futures.append(fut)
        timer = None if timeout is None else loop.call_later(timeout, _expire, fut)
        try:
            await fut
        finally:
            if timer is not None:
                timer.cancel()
            if fut in futures:
                futures.remove(fut)

    async def follow(self, start: int = 0, idle: float | None = None,
                     linger: float = 0.0) -> AsyncIterator[tuple[int, list[str]]]:
        """(index of the first, events) batches from `start` on, live until the run ends: all that
        is there at each wake-up goes out together (one write per batch, not per event). With
        `linger`, a running run is given that many seconds (or until it ends) to add more before
        a batch goes: a fast turn is one write, a slow one shows its events at most `linger` late.
        With `idle`, an empty batch comes after that many quiet seconds (for a keep-alive)."""
        i = max(0, start)
        while True:
            if i < len(self.events):
                if linger and not self.done:
                    await self._wait(self._enders, linger)
                batch = self.events[i:]
                yield i, batch
                i += len(batch)
                continue
            if self.done:
                return
            await self._wait(self._waiters, idle)
            if i == len(self.events) and not self.done and idle is not None:
                yield i, []

    async def acknowledged(self) -> None:
        """A follower read the whole stream: a run that ended with RUN_FINISHED has delivered its
        reply (a failure to record that only means the reply is given once more)."""
        ack, self.acknowledge = self.acknowledge, None
        if ack is None or not self.finished:
            return
        try:
            await ack()
        except Exception:  # the store away a moment: the next turn gives the reply first
            log.warning("run %s: its reply could not be marked delivered", self.run_id, exc_info=True)


def _expire(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class RunRegistry:
    """Runs by runId: the last `limit` in memory (running ones are never evicted) and, with a
    `root`, every finished run on disk, so a repeated runId is not run again after a restart."""

    def __init__(self, limit: int = 2000, root: Path | None = None) -> None:
        self.limit = limit
        self.root = root
        self._runs: OrderedDict[str, RunLog] = OrderedDict()
        self._folder = "" if root is None else str(root)
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)

    def _name(self, run_id: str) -> str:
        # runIds are the client's text: the file is named by their hash, never by the text
        return os.path.join(self._folder, hashlib.sha256(run_id.encode()).hexdigest()[:40] + ".json")

    def _file(self, run_id: str) -> Path:
        assert self.root is not None
        return Path(self._name(run_id))

    def get(self, run_id: str) -> RunLog | None:
        """The run with this id: in memory, else as recorded when it finished."""
        run = self._runs.get(run_id)
        if run is not None or self.root is None:
            return run
        # every new run asks (a new runId is not on disk either): the miss is one failed open,
        # no Path built (a third of the lookup's time)
        try:
            with open(self._name(run_id), "rb") as fh:
                head, *events = fh.read().decode("utf-8").split("\n")
            data = json.loads(head)
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("run_id") != run_id:
            return None
        if "events" in data:  # a record written before records were JSON lines: one document
            events = data["events"]
        return RunLog(run_id=run_id, thread_id=data["thread_id"], owner=data["owner"],
                      events=[e for e in events if e], done=True)

    def add(self, run: RunLog) -> None:
        """Register a new run; evict the oldest finished ones beyond the limit."""
        self._runs[run.run_id] = run
        if len(self._runs) > self.limit:
            for rid in [r for r, log in self._runs.items() if log.done][: len(self._runs) - self.limit]:
                del self._runs[rid]

    def finished(self, *runs: RunLog) -> None:
        """Record finished runs on disk, one file each: a line naming the run, then its events as
        they were sent (JSON text already: written as it is, not escaped into one document)."""
        if self.root is None:
            return
        for run in runs:
            head = json.dumps({"run_id": run.run_id, "thread_id": run.thread_id, "owner": run.owner},
                              ensure_ascii=False)
            tmp = self._file(run.run_id).with_suffix(".tmp")
            tmp.write_text("\n".join([head, *run.events]) + "\n", encoding="utf-8")
            tmp.replace(self._file(run.run_id))

    def running(self) -> list[RunLog]:
        """Runs still in progress (graceful shutdown waits on these)."""
        return [r for r in self._runs.values() if not r.done]


def sse_frames(first: int, batch: list[str]) -> str:
    """Server-Sent Events frames; each id lets a client resume with Last-Event-ID. An empty batch
    is an SSE comment: a keep-alive, so proxies do not close a stream waiting on a slow tool."""
    if not batch:
        return ": keep-alive\n\n"
    return "".join(f"id: {first + k}\ndata: {data}\n\n" for k, data in enumerate(batch))
