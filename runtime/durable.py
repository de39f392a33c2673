"""A session's durability: its lease, its units of work, its lost replies (docs/interpretations.md:
Restart, A lost reply, One turn at a time).

Every turn or decision runs under the session's lease (`Durability.turn`): a second one meanwhile,
from this process or another, gets `SessionBusy`. A turn commits once, at its end, with its reply
(`commit`); inside it, only a write's state forces a commit (`checkpoint`): its pre-registration
before the tool is called, and its outcome once it is known. A failed commit leaves nothing in the
store; the session in memory is then reloaded from the store and the caller gets
`SessionUnavailable` (or `SessionBusy` when the lease was lost). The reply is marked delivered
when the lease is given back; a reply stored but never delivered is given at the next turn, and a
message repeating the one it answered gets it and starts nothing.

The trace's audit chain is the session's, not the process's: every unit stores the hash of the
session's latest trace event with the rest, and the lease's release stores the turn's last one;
a process that takes a session up (after a restart, or from another worker) continues the chain
from there, so `skillc audit verify` sees one chain across restarts.
"""
from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from skillc.runtime.errors import SessionBusy, SessionUnavailable
from skillc.runtime.evidence import reopen
from skillc.runtime.state import Evidence, SessionState, TaskState
from skillc.runtime.store.base import (
    LeaseLost,
    ReplyRecord,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
    new_holder,
    register_holder,
)

log = logging.getLogger("skillc.runtime")

LEASE_TTL = 300.0  # seconds; renewed by every unit of work of the turn
ENDED = ("DONE", "FAILED", "CANCELLED")


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


def load_held(store: Any, state: SessionState) -> tuple[dict[str, Evidence], TaskState | None]:
    """What a session holds in memory besides its state: its active task (node evidence lists
    attached) and the evidence a turn can reach: the active task's (§9: a node sees its own and
    its upstream nodes' evidence) and every write still unsettled (docs/interpretations.md: Restart). Earlier tasks'
    records stay in the store (`Session.find_evidence` reads one when asked by id), so reopening
    a session costs the same at turn 1,000 as at turn 10."""
    task = store.get_task(state.id, state.active_task) if state.active_task else None
    since = (task.evidence_from if task is not None else state.next_evidence)
    evidence = {e.id: e for e in store.evidence_of(state.id, since=since)}
    return evidence, attach_evidence(task, evidence)


class Durability:
    """One Session's link to the store."""

    def __init__(self, session: Any) -> None:
        # `session` is a runtime.session.Session (not imported: session imports this module)
        self.s = session
        self.holder = new_holder()  # one per Session object: two objects on one session exclude each other
        register_holder(self.holder, session.rt.store)
        self.ttl = float(getattr(session.rt, "lease_ttl", LEASE_TTL))
        self.leased = False
        self.busy = False
        self.stale = False  # memory may differ from the store (a failed commit): reload first
        self.recover = False  # loaded without the lease: settle what a dead holder left, under it
        self.closing: list[TaskState] = []  # stray open tasks closed by recovery, written at the next commit
        self.last: ReplyRecord | None = None  # the latest stored reply, read under the lease
        self.delivered: int | None = None  # the turn whose reply this turn hands over
        self.units = 0  # units committed (bench/turns.py)
        self.started: set[tuple[str, str]] = set()  # (task, node) committed as RUNNING

    @property
    def store(self) -> Any:
        return self.s.rt.store

    # ------------------------------------------------------------ units of work

    def commit(self, reply: ReplyRecord | None = None, handed: ReplyRecord | None = None) -> None:
        """Commit the session row, the active task, changed evidence (and the reply) as one unit;
        `handed`: an earlier undelivered reply this turn's reply carries, stored as delivered."""
        s = self.s
        now = s.now()
        s.rt.trace.flush()  # the chain head this unit stores is on disk before the unit commits
        try:
            with self.store.unit(s.id, holder=self.holder if self.leased else None, expires=now + self.ttl) as uow:
                for ev in s._dirty.values():
                    uow.put_evidence(s.id, ev)
                uow.put_session(s.session, now)
                head = self._trace_head()
                if head is not None:
                    uow.put_trace_head(s.id, head)
                if s.task is not None:
                    uow.put_task(s.task)
                for task in self.closing:
                    uow.put_task(task)
                if reply is not None:
                    uow.put_reply(reply)
                if handed is not None:
                    uow.put_reply(replace(handed, delivered=True))
        except StoreError:
            self.stale = True
            raise
        s._dirty.clear()
        self.closing.clear()
        self.units += 1
        if s.task is not None:
            self.started.update((s.task.id, n) for n in s.task.order if s.task.nodes[n].state == "RUNNING")

    def checkpoint(self) -> None:
        """A stopping point inside a turn: commit now when a write was pre-registered or settled
        since the last commit, or a node started running (so a process that dies during its
        steps reopens it at the next turn, docs/interpretations.md: Restart); everything else
        waits for the turn's end."""
        s = self.s
        if any(ev.side_effect == "WRITE" for ev in s._dirty.values()):
            self.commit()
            return
        task = s.task
        if task is not None and any(task.nodes[n].state == "RUNNING" and (task.id, n) not in self.started
                                    for n in task.order):
            self.commit()

    def reload(self) -> None:
        """Replace the session in memory by the stored one (after a failed commit, or when another
        process changed it). `StoreUnavailable` leaves it marked stale for the next turn."""
        s, store = self.s, self.store
        try:
            state = store.get_session(s.id)
            if state is None:  # never committed: start again from nothing stored
                state = SessionState(id=s.id, platform=dict(s.session.platform))
            evidence, task = load_held(store, state)
        except StoreUnavailable:
            self.stale = True
            raise
        s.session, s.evidence, s.task = state, evidence, task
        s._dirty.clear()
        self.closing.clear()
        self.started.clear()
        self.stale = False
        self.recover = True

    def recover_now(self) -> None:
        """Under the lease: a STARTED write left by a dead holder becomes UNKNOWN_PRE_CALL
        (docs/interpretations.md: Restart), and an open task that is not the active one is closed (no task stays
        RUNNING for ever). Written at the next commit."""
        s = self.s
        for ev in reopen(s.evidence.values()):
            s._dirty[ev.id] = ev
        for task in self.store.open_tasks(s.id):
            if task.id != s.session.active_task:
                task.state, task.reason = "CANCELLED", "left open when the runtime stopped; superseded by a later task"
                self.closing.append(task)
        self.recover = False

    def try_recover(self) -> None:
        """At open: recover at once when the lease is free (else the first turn does it)."""
        s = self.s
        lease = self.store.acquire_lease(s.id, self.holder, s.now(), self.ttl)
        if not lease.granted:
            return
        self.leased = True
        try:
            self.recover_now()
            if s._dirty or self.closing:
                self.commit()
        finally:
            self.leased = False
            self._release(None)

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
            try:
                lease = self.store.acquire_lease(s.id, self.holder, s.now(), self.ttl)
            except StoreUnavailable as exc:
                raise SessionUnavailable(str(exc)) from exc
            if not lease.granted:
                raise SessionBusy(f"session {s.id} has a turn in progress elsewhere")
            self.leased, self.delivered = True, None
            try:
                try:
                    if self.stale or lease.version != s.session.version:
                        self.reload()
                    if self.recover:
                        self.recover_now()
                    self.last = self.store.last_reply(s.id)
                    self._continue_chain()
                except StoreUnavailable as exc:
                    raise SessionUnavailable(str(exc)) from exc
                yield self.last if self.last is not None and not self.last.delivered else None
            except BaseException:
                self.stale = True  # whatever the turn changed in memory was not committed
                raise
            finally:
                self.leased = False
                self._release(self.delivered)
        finally:
            self.busy = False

    def _trace_head(self) -> str | None:
        """The hash of this session's latest trace event, if the trace chains its events."""
        head = getattr(self.s.rt.trace, "chain_head", None)
        return head(self.s.id) if head is not None else None

    def _continue_chain(self) -> None:
        """Under the lease, before the turn's first event: a trace that has chained nothing of
        this session yet (a new process) continues from the head the store kept."""
        trace = self.s.rt.trace
        if getattr(trace, "chain", None) is None or trace.chain_head(self.s.id) is not None:
            return  # no chain, or this writer carries it on already
        head = self.store.trace_head(self.s.id)
        if head is not None:
            trace.continue_chain(self.s.id, head)

    def _release(self, delivered: int | None) -> None:
        try:
            self.store.release_lease(self.s.id, self.holder, delivered_turn=delivered,
                                     trace_head=self._trace_head())
        except StoreError:  # the lease expires; the reply is delivered again at worst
            log.warning("session %s: the lease could not be released", self.s.id, exc_info=True)

    def repeated(self, message: str | None, answer: dict[str, Any] | None,
                 client_message_id: str | None) -> ReplyRecord | None:
        """The stored reply this input repeats, if any: the same client message id as the latest
        reply's; the same text as a message whose reply was never delivered; the same decision as
        the latest one while nothing waits for a decision (a decision delivered twice)."""
        last = self.last
        if last is None:
            return None
        if client_message_id is not None:
            return last if last.client_message_id == client_message_id else None
        if message is not None and not last.delivered and last.message == message:
            return last
        if answer is not None and last.answer == answer and self.s.pending() is None:
            return last
        return None

    def fail(self, exc: StoreError) -> Exception:
        """The caller's error for a failed unit of work, after reloading what is stored."""
        try:
            self.reload()
        except StoreError:
            pass  # still unreadable: reloaded at the next turn
        if isinstance(exc, LeaseLost):
            return SessionBusy(f"session {self.s.id}: the turn lost its lease to another; nothing of it was kept")
        if isinstance(exc, StoreCorrupt):
            return exc
        return SessionUnavailable(f"session {self.s.id}: the turn could not be stored, nothing of it was kept "
                                  f"({exc}); try again")
