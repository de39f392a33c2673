"""A session's durability: its lease, its units of work, its lost replies (docs/interpretations.md:
Restart, A lost reply, One turn at a time).

Every turn or decision runs under the session's lease (`Durability.turn`): a second one meanwhile,
from this process or another, gets `SessionBusy`. The lease carries a fencing token; every unit
checks holder and token in its own transaction, and a heartbeat renews the lease's expiry while
the turn runs. Right before a business tool is called, `fence()` checks that the lease is still
this turn's: by its local deadline (the last renewal's start + ttl, less a margin), and past it by
asking the store: a worker stalled past its lease (stopped, swapped out) whose lease was taken
over sends nothing more, even when no unit comes between its pre-registration and the call.

A turn commits once, at its end, with its reply (`commit`); inside it, only a write's state
forces a commit (`checkpoint`): its pre-registration before the tool is called, and its outcome
once it is known. A failed commit leaves nothing in the store; the session in memory is then
reloaded from the store and the caller gets `SessionUnavailable` (or `SessionBusy` when the lease
was lost). Whoever takes a lease another holder never gave back (it died, or stalled past expiry)
settles that holder's STARTED writes first (`recover_now`), whether its copy was fresh or not.

A reply counts as delivered once its caller has it: when `send` returns, for the in-process API;
when the client acknowledged it, for a server that says so (`Runtime.acknowledges_delivery`: the
server calls `Session.acknowledge`). A reply stored but never delivered is given at the next turn,
and a message repeating the one it answered gets it and starts nothing. A server's acknowledgement
is stored after its response ended, so the client's next turn may reach another worker first: a
reply stored for acknowledgement names the holder that will acknowledge it and a deadline
(`ACK_HOLD` after the commit), and a turn of another holder that finds it undelivered waits for
that acknowledgement, until the deadline or that holder's process is known dead, before it gives
the reply again (`_acknowledged`; docs/API.md §2).

Store calls go through `store/offloop.py` (the store's async face, or its threads), never on the event loop.

The trace's audit chain is the session's, not the process's: every unit stores the hash of the
session's latest trace event with the rest, and the lease's release stores the turn's last one;
a process that takes a session up (after a restart, or from another worker) continues the chain
from there, so `skillc audit verify` sees one chain across restarts.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from skillc.runtime.words.errors import SessionBusy, SessionUnavailable
from skillc.runtime.call.evidence import reopen
from skillc.runtime.seam.state import Evidence, SessionState, TaskState
from skillc.runtime.store import offloop
from skillc.runtime.store.base import (
    LeaseLost,
    ReplyRecord,
    Store,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
    holder_dead,
    new_holder,
    register_holder,
    release_holder,
)
from skillc.runtime.words.vocab import FINAL_TASK, NodeStatus, SideEffect, TaskStatus

if TYPE_CHECKING:
    from skillc.runtime.telemetry.trace import TraceWriter

log = logging.getLogger("skillc.runtime")

LEASE_TTL = 30.0  # seconds; renewed by the turn's heartbeat (every third of it) and by its units
# seconds a reply stored for a client's acknowledgement may wait for it before a turn of another
# holder gives it again: it covers the response's end (RUN_FINISHED, at most runs.LINGER later)
# and the acknowledgement's write, not a client that reads its response for longer than this
ACK_HOLD = 2.0
ACK_POLL = (0.002, 0.05)  # the first and the longest pause between reads of that acknowledgement
RELEASE_TRIES = (0.05, 0.2, 0.5)  # seconds between the turn's own tries to give its lease back
_RELEASING: set[asyncio.Task[None]] = set()  # releases still being tried after their turn ended


def attach_evidence(task: TaskState | None, evidence: dict[str, Any]) -> TaskState | None:
    """Give each node of a task loaded from the store its evidence ids, oldest first: the records
    registered by that node (a store need not keep the lists, see SQLiteStore.put_task)."""
    if task is None:
        return None
    lists: dict[str, list[tuple[int, str]]] = {}
    for ev in evidence.values():
        if ev.task == task.id and ev.node in task.nodes:
            lists.setdefault(ev.node, []).append((ev.seq, ev.id))
    for node_id, node in task.nodes.items():
        node.evidence = [eid for _, eid in sorted(lists.get(node_id, []))]
    return task


async def load_held(store: Any, state: SessionState) -> tuple[dict[str, Evidence], TaskState | None]:
    """What a session holds in memory besides its state: its active task (node evidence lists
    attached) and the evidence a turn can reach: the active task's (§9: a node sees its own and
    its upstream nodes' evidence) and every write still unsettled (docs/interpretations.md: Restart). Earlier tasks'
    records stay in the store (`TurnEnv.find_evidence` reads one when asked by id), so reopening
    a session costs the same at turn 1,000 as at turn 10."""
    task = await offloop.call(store, store.get_task, state.id, state.active_task) if state.active_task else None
    since = (task.evidence_from if task is not None else state.next_evidence)
    evidence = {e.id: e for e in await offloop.call(store, store.evidence_of, state.id, since=since)}
    return evidence, attach_evidence(task, evidence)


class HeldSession(Protocol):
    """What a session's durability needs of the session in memory (`turn_env.TurnEnv` is one):
    the records it commits and, after a failed unit, replaces by the stored ones, and the parts
    it commits them with."""

    session: SessionState
    evidence: dict[str, Evidence]
    task: TaskState | None
    dirty: dict[str, Evidence]
    """Evidence records changed since the last commit (written by the next one, then cleared)."""

    @property
    def id(self) -> str:
        """The session id."""
        ...

    @property
    def store(self) -> Store:
        """The store the session is kept in."""
        ...

    @property
    def trace(self) -> TraceWriter:
        """The trace writer (its audit chain's head is stored with every unit)."""
        ...

    @property
    def acknowledges_delivery(self) -> bool:
        """A reply counts as delivered only once the client acknowledged it (a server)."""
        ...

    def now(self) -> float:
        """The runtime clock."""
        ...


class Durability:
    """One session's link to the store."""

    def __init__(self, session: HeldSession, recover: bool = False) -> None:
        self.s = session
        self.holder = new_holder()  # one per Session object: two objects on one session exclude each other
        ttl = getattr(session.store, "lease_ttl", None)
        self.ttl = float(ttl or LEASE_TTL)
        self.margin = min(self.ttl * 0.2, 5.0)  # the local deadline ends this much before the store's expiry
        self.leased = False
        self.fence_token: int | None = None  # the held lease's fencing token
        self.deadline = 0.0  # time.monotonic() after which the lease may be someone else's
        self.busy = False
        self.stale = False  # memory may differ from the store (a failed commit): reload first
        # loaded without the lease (or taken over from a holder that never gave it back): settle
        # what that holder left, under the lease, before the first turn does anything
        self.recover = recover
        self.closing: list[TaskState] = []  # stray open tasks closed by recovery, written at the next commit
        self.last: ReplyRecord | None = None  # the latest stored reply, read under the lease
        self.delivered: int | None = None  # the turn whose reply this turn hands over
        self.units = 0  # units committed (bench/turns.py)
        self.started: set[tuple[str, str]] = set()  # (task, node) committed as RUNNING
        self.head_stored: str | None = None  # the chain head this turn's last unit stored
        self.carried = self._carried()  # the task the stored session row carries, as far as known

    @property
    def store(self) -> Any:
        return self.s.store

    async def _io(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return await offloop.call(self.store, fn, *args, **kwargs)

    # ------------------------------------------------------------ units of work

    async def commit(self, reply: ReplyRecord | None = None, handed: ReplyRecord | None = None) -> None:
        """Commit the session row, the active task, changed evidence (and the reply) as one unit;
        `handed`: an earlier undelivered reply this turn's reply carries, stored as delivered."""
        s = self.s
        s.trace.flush()  # the chain head this unit stores is on disk before the unit commits
        began = time.monotonic()
        try:
            await self._write(s.now(), reply, handed)
        except StoreError:
            self.stale = True
            raise
        if self.leased and getattr(self.store, "units_renew", True):
            # the unit renewed the lease: it is ours until ttl after the unit began
            self.deadline = max(self.deadline, began + self.ttl - self.margin)
        s.dirty.clear()
        self.closing.clear()
        self.units += 1
        if s.task is not None:
            self.started.update((s.task.id, n) for n in s.task.order if s.task.nodes[n].state == NodeStatus.RUNNING)

    def _carried(self) -> TaskState | None:
        """The task the session row carries: the open active task (others have rows of their own)."""
        task = self.s.task
        if task is None or task.id != self.s.session.active_task or task.state in FINAL_TASK:
            return None
        return task

    async def _write(self, now: float, reply: ReplyRecord | None, handed: ReplyRecord | None) -> None:
        """The unit itself (the turn awaits it, so nothing changes meanwhile)."""
        s = self.s
        leased = self.leased
        carried, left = self._carried(), self.carried
        async with offloop.unit(self.store, s.id, holder=self.holder if leased else None, expires=now + self.ttl,
                                fence=self.fence_token if leased else None) as uow:
            for ev in s.dirty.values():
                uow.put_evidence(s.id, ev)
            uow.put_session(s.session, now, carried)  # the open active task rides in the session row
            head = self._trace_head()
            if head is not None:  # a column of the session row: written with it
                uow.put_trace_head(s.id, head)
            if s.task is not None and carried is None:  # ended (or not the active one): its own row
                uow.put_task(s.task)
            if left is not None and left.id != (s.task.id if s.task is not None else None):
                uow.put_task(left)  # the row carried it, and no longer does (a new task took its place)
            for task in self.closing:
                uow.put_task(task)
            if reply is not None:
                if leased and s.acknowledges_delivery:  # the client's acknowledgement will mark it
                    reply = replace(reply, extra={**reply.extra, "acking": self.holder, "ack_by": now + ACK_HOLD})
                uow.put_reply(reply)
            if handed is not None:
                uow.put_reply(replace(handed, delivered=True))
        self.head_stored = head if leased else None  # committed
        self.carried = carried

    async def checkpoint(self) -> None:
        """A stopping point inside a turn: commit now when a write was pre-registered or settled
        since the last commit, or a node started running (so a process that dies during its
        steps reopens it at the next turn, docs/interpretations.md: Restart); everything else
        waits for the turn's end."""
        s = self.s
        if any(ev.side_effect == SideEffect.WRITE for ev in s.dirty.values()):
            await self.commit()
            return
        task = s.task
        if task is not None and any(task.nodes[n].state == NodeStatus.RUNNING and (task.id, n) not in self.started
                                    for n in task.order):
            await self.commit()

    async def fence(self) -> None:
        """Right before a business tool is called: `LeaseLost` unless this turn's lease is still
        its own. Within its local deadline it surely is; past it (the worker stalled, a commit
        took long) the store is asked, renewing the lease only if nobody took it meanwhile (same
        holder, same token). Outside a leased turn there is nothing to check."""
        if not self.leased or time.monotonic() < self.deadline:
            return
        s, began = self.s, time.monotonic()
        try:
            kept = await self._io(self.store.renew_lease, s.id, self.holder, self.fence_token, s.now() + self.ttl)
        except StoreError as exc:
            raise LeaseLost(f"session {s.id}: this turn's lease cannot be confirmed ({exc}); nothing is sent") from exc
        if not kept:
            raise LeaseLost(f"session {s.id}: this turn's lease was taken over while it stalled; nothing is sent")
        self.deadline = max(self.deadline, began + self.ttl - self.margin)

    async def reload(self) -> None:
        """Replace the session in memory by the stored one (after a failed commit, or when another
        process changed it). `StoreUnavailable` leaves it marked stale for the next turn."""
        s = self.s
        try:
            state, evidence, task = await self._read(s.id)
        except StoreUnavailable:
            self.stale = True
            raise
        if state is None:  # never committed: start again from nothing stored
            state = SessionState(id=s.id, platform=dict(s.session.platform))
        s.session, s.evidence, s.task = state, evidence, task
        self.carried = self._carried()
        s.dirty.clear()
        self.closing.clear()
        self.started.clear()
        self.stale = False
        self.recover = True

    async def _read(self, session_id: str) -> tuple[SessionState | None, dict[str, Evidence], TaskState | None]:
        state = await self._io(self.store.get_session, session_id)
        if state is None:
            return None, {}, None
        evidence, task = await load_held(self.store, state)
        return state, evidence, task

    async def recover_now(self) -> None:
        """Under the lease: a STARTED write left by a holder that is gone becomes
        UNKNOWN_PRE_CALL (docs/interpretations.md: Restart; settled through its contract's verify before anything else
        of the node), and an open task that is not the active one is closed (no task stays
        RUNNING for ever). Written at the next commit."""
        s = self.s
        for ev in reopen(s.evidence.values()):
            s.dirty[ev.id] = ev
        for task in await self._io(self.store.open_tasks, s.id):
            if task.id != s.session.active_task:
                task.state, task.reason = TaskStatus.CANCELLED, "left open when the runtime stopped; superseded by a later task"
                self.closing.append(task)
        self.recover = False

    async def try_recover(self) -> None:
        """At open: recover at once when the lease is free (else the first turn does it)."""
        s = self.s
        try:
            lease = await self._io(self.store.acquire_lease, s.id, self.holder, s.now(), self.ttl)
        except StoreUnavailable:
            return  # the session opens as loaded; its first turn recovers, under the lease
        if not lease.granted:
            return
        self._hold(lease, time.monotonic())
        try:
            if lease.version != s.session.version:
                await self.reload()
            await self.recover_now()
            if s.dirty or self.closing:
                await self.commit()
        finally:
            self.leased = False
            await self._release(None)

    def _hold(self, lease: Any, began: float) -> None:
        register_holder(self.holder, self.store)  # known to this process while it holds the lease (until _release)
        self.leased, self.fence_token = True, lease.fence
        self.deadline = began + self.ttl - self.margin

    # ------------------------------------------------------------ turns

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[ReplyRecord | None]:
        """Hold the session's lease for one turn; yields the reply a dead turn stored and never
        delivered (docs/interpretations.md: A lost reply), or None."""
        s = self.s
        if self.busy:
            raise SessionBusy(f"session {s.id} has a turn in progress")
        self.busy = True
        try:
            began = time.monotonic()
            try:
                lease = await self._io(self.store.acquire_lease, s.id, self.holder, s.now(), self.ttl)
            except StoreUnavailable as exc:
                raise SessionUnavailable(str(exc)) from exc
            if not lease.granted:
                raise SessionBusy(f"session {s.id} has a turn in progress elsewhere")
            self._hold(lease, began)
            self.delivered = None
            self.head_stored = None  # the release stores the head unless this turn's last unit did
            beat = asyncio.get_running_loop().create_task(self._heartbeat())
            try:
                try:
                    if self.stale or lease.version != s.session.version:
                        await self.reload()
                    if self.recover or lease.taken_over:
                        await self.recover_now()
                    self.last = await self._acknowledged(lease.last)
                    self._continue_chain(lease.head)
                except StoreUnavailable as exc:
                    raise SessionUnavailable(str(exc)) from exc
                yield self.last if self.last is not None and not self.last.delivered else None
            except BaseException:
                self.stale = True  # whatever the turn changed in memory was not committed
                raise
            finally:
                beat.cancel()
                self.leased = False
                await asyncio.shield(self._release(self.delivered))
        finally:
            self.busy = False

    async def _acknowledged(self, last: ReplyRecord | None) -> ReplyRecord | None:
        """The latest reply once the acknowledgement another holder owes it is stored (read again
        until then), or once it no longer can come: past its deadline (by the runtime's clock, and
        `ACK_HOLD` by this process's monotonic one), or that holder's process is dead. A reply this holder
        stored is not waited for: this process orders its own acknowledgements before its next
        run (server/context.py, `start_run`), so an undelivered one is a stream that broke."""
        pause, until = ACK_POLL[0], time.monotonic() + ACK_HOLD
        while last is not None and not last.delivered and self._owed(last) and time.monotonic() < until:
            await asyncio.sleep(pause)
            pause = min(pause * 2, ACK_POLL[1])
            last = await self._io(self.store.last_reply, self.s.id)
        return last

    def _owed(self, last: ReplyRecord) -> bool:
        """`last` still waits for another holder's acknowledgement that may yet be stored."""
        acking, by = last.extra.get("acking"), last.extra.get("ack_by")
        return (isinstance(acking, str) and acking != self.holder and isinstance(by, (int, float))
                and self.s.now() < by and not holder_dead(acking))

    async def _heartbeat(self) -> None:
        """While the turn runs: renew the lease every third of its ttl. A renewal refused (the
        lease was taken over) ends the beat and the lease's local deadline with it; a renewal
        that fails (the database away a moment) is tried again at the next beat."""
        s = self.s
        while self.leased:
            await asyncio.sleep(self.ttl / 3)
            began = time.monotonic()
            try:
                kept = await self._io(self.store.renew_lease, s.id, self.holder, self.fence_token,
                                      s.now() + self.ttl)
            except StoreError:
                log.warning("session %s: the lease could not be renewed (tried again)", s.id, exc_info=True)
                continue
            if not kept:
                self.deadline = 0.0
                return
            self.deadline = max(self.deadline, began + self.ttl - self.margin)

    def _trace_head(self) -> str | None:
        """The hash of this session's latest trace event, if the trace chains its events."""
        head = getattr(self.s.trace, "chain_head", None)
        return head(self.s.id) if head is not None else None

    def _continue_chain(self, head: str | None) -> None:
        """Under the lease, before the turn's first event: a trace that has chained nothing of
        this session yet (a new process) continues from the head the store kept (`head`, read
        with the lease)."""
        trace = self.s.trace
        if getattr(trace, "chain", None) is None or trace.chain_head(self.s.id) is not None:
            return  # no chain, or this writer carries it on already
        if head is not None:
            trace.continue_chain(self.s.id, head)

    async def _release(self, delivered: int | None) -> None:
        """Give the lease back; a failed try is repeated (a moment's database error must not
        leave the session busy until the lease expires), then handed to a background task that
        keeps trying until the lease would have expired anyway."""
        if self.s.acknowledges_delivery:
            delivered = None  # the client's acknowledgement marks it (Session.acknowledge)
        args = (self.s.id, self.holder)
        head = self._trace_head()
        kwargs = {"fence": self.fence_token, "delivered_turn": delivered,
                  "trace_head": head if head != self.head_stored else None}  # None: the last unit stored it
        self.head_stored = None
        for pause in (*RELEASE_TRIES, None):
            try:
                await self._io(self.store.release_lease, *args, **kwargs)
                release_holder(self.holder)
                return
            except StoreError:
                if pause is None:
                    break
                await asyncio.sleep(pause)
        log.warning("session %s: the lease could not be released; still trying", self.s.id, exc_info=True)
        task = asyncio.get_running_loop().create_task(self._release_later(args, kwargs, time.monotonic() + self.ttl))
        _RELEASING.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(_RELEASING.discard)

    async def _release_later(self, args: tuple[Any, ...], kwargs: dict[str, Any], until: float) -> None:
        pause = 1.0
        try:
            while time.monotonic() < until:
                await asyncio.sleep(pause)
                try:
                    await self._io(self.store.release_lease, *args, **kwargs)
                    return
                except StoreError:
                    pause = min(pause * 2, 10.0)
        finally:
            release_holder(self.holder)  # given back, or expired by now: no lease of this holder is left

    async def acknowledge(self, turn: int) -> None:
        """The client received the reply of `turn`: it is not given again."""
        await self._io(self.store.mark_delivered, self.s.id, turn)

    def repeated(self, message: str | None, answer: dict[str, Any] | None,
                 client_message_id: str | None, waiting: bool) -> ReplyRecord | None:
        """The stored reply this input repeats, if any: the same client message id as the latest
        reply's; the same text as the message whose reply was never delivered, whatever its id
        (a person retyping, a client minting a new id per message); the same decision as the
        latest one while nothing waits for a decision (`waiting`: the session has a question
        open; a decision delivered twice, no id)."""
        last = self.last
        if last is None:
            return None
        if client_message_id is not None and last.client_message_id == client_message_id:
            return last
        if message is not None and not last.delivered and last.message == message:
            return last
        if client_message_id is None and answer is not None and last.answer == answer and not waiting:
            return last
        return None

    async def fail(self, exc: StoreError) -> Exception:
        """The caller's error for a failed unit of work, after reloading what is stored."""
        try:
            await self.reload()
        except StoreError:
            pass  # still unreadable: reloaded at the next turn
        if isinstance(exc, LeaseLost):
            return SessionBusy(f"session {self.s.id}: the turn lost its lease to another; nothing of it was kept")
        if isinstance(exc, StoreCorrupt):
            return exc
        return SessionUnavailable(f"session {self.s.id}: the turn could not be stored, nothing of it was kept "
                                  f"({exc}); try again")
