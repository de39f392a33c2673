"""The run registry: every AG-UI run's encoded events, kept so a stream can be followed again.

A run is executed by the server, not by the HTTP request that asked for it: the request only
follows the run's log. So a client that disconnects loses nothing (the turn completes), a
repeated `runId` re-streams the same log instead of running twice, and `Last-Event-ID` resumes
a stream where it broke (docs/API.md §4).
"""
from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field


@dataclass
class RunLog:
    """One run: its thread, owner, encoded events (JSON text, in order) and whether it ended."""

    run_id: str
    thread_id: str
    owner: str
    events: list[str] = field(default_factory=list)
    done: bool = False
    task: asyncio.Task[None] | None = None
    _wake: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    def append(self, data: str) -> None:
        """Add one encoded event and wake every follower."""
        self.events.append(data)
        self._signal()

    def close(self) -> None:
        """The run ended: followers drain what is left and stop."""
        self.done = True
        self._signal()

    def _signal(self) -> None:
        self._wake.set()
        self._wake = asyncio.Event()

    async def follow(self, start: int = 0) -> AsyncIterator[tuple[int, list[str]]]:
        """(index of the first, events) batches from `start` on, live until the run ends: all that
        is there at each wake-up goes out together (one write per batch, not per event)."""
        i = max(0, start)
        while True:
            if i < len(self.events):
                batch = self.events[i:]
                yield i, batch
                i += len(batch)
                continue
            if self.done:
                return
            await self._wake.wait()


class RunRegistry:
    """The last `limit` runs of this process by runId (running ones are never evicted)."""

    def __init__(self, limit: int = 2000) -> None:
        self.limit = limit
        self._runs: OrderedDict[str, RunLog] = OrderedDict()

    def get(self, run_id: str) -> RunLog | None:
        """The run with this id, if this process still has it."""
        return self._runs.get(run_id)

    def add(self, run: RunLog) -> None:
        """Register a new run; evict the oldest finished ones beyond the limit."""
        self._runs[run.run_id] = run
        if len(self._runs) > self.limit:
            for rid in [r for r, log in self._runs.items() if log.done][: len(self._runs) - self.limit]:
                del self._runs[rid]

    def running(self) -> list[RunLog]:
        """Runs still in progress (graceful shutdown waits on these)."""
        return [r for r in self._runs.values() if not r.done]


def sse_frames(first: int, batch: list[str]) -> str:
    """Server-Sent Events frames; each id lets a client resume with Last-Event-ID."""
    return "".join(f"id: {first + k}\ndata: {data}\n\n" for k, data in enumerate(batch))
