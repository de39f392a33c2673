"""The store's interface: what the runtime needs from durable state, whatever the database.

A backend (SQLite here, PostgreSQL in `postgres.py`) implements `Store`. The runtime changes state
only inside a unit of work, one per stopping point (a turn, a suspension, a settled write, a
write's pre-registration):

    with store.unit(session_id, holder=lease.holder, expires=now + ttl) as uow:
        uow.put_session(state, now)
        uow.put_task(task)
        uow.put_evidence(session_id, ev)
        uow.put_reply(reply)

Everything inside commits together or not at all. A failed commit raises `StoreUnavailable` and
leaves the store usable (no transaction is left open); the caller discards what it holds in
memory and reloads. History (user messages, entities, evidence, replies) is appended, never
rewritten: a turn writes what it changed, so its cost does not grow with the session.

A session is leased to one turn at a time (docs/interpretations.md: One turn at a time): `acquire_lease` grants the lease when it is free,
expired, held by a process of this host that is gone, or already this holder's. Every grant
carries a *fencing token*, a number that only grows across the store (SQLite: one more than the
largest a lease row holds, rows being kept; PostgreSQL: a sequence), kept in the lease row;
every unit of a leased session checks holder and token inside its transaction (and, where the
store's `units_renew` says so, renews the expiry), so a holder that lost its lease, even for a moment, can never write again (`LeaseLost`).
Liveness is the lease's own expiry, renewed by `renew_lease` while a turn runs (a heartbeat), not
anything tied to a database connection: a database restart does not make a live holder look dead.
"""
from __future__ import annotations

import os
import socket
import uuid
import weakref
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from skillc.runtime.words.errors import SkillcError
from skillc.runtime.seam.state import Evidence, SessionState, TaskState

# Version of the stored layout; a backend migrates older stores on open.
SCHEMA_VERSION = 7


class StoreError(SkillcError):
    """The store cannot be opened, is from a newer skillc, or cannot be used."""


class StoreUnavailable(StoreError):
    """A unit of work could not be committed (disk full, I/O error, database gone). Nothing of the
    unit was kept; the store works again once the cause is gone."""


class StoreCorrupt(StoreError):
    """A stored row of one session cannot be read back. Other sessions are unaffected."""

    def __init__(self, session: str, what: str, detail: str) -> None:
        super().__init__(f"session {session}: stored {what} is unreadable ({detail})")
        self.session, self.what, self.detail = session, what, detail


class StoreConflict(StoreError):
    """The session was changed by someone else since it was loaded (version mismatch), or a new
    session's id is already taken: nothing was written."""


class LeaseLost(StoreError):
    """A unit of work of a leased session found the lease held by another holder: nothing was
    written."""


@dataclass
class ReplyRecord:
    """A turn's reply as stored with the turn, and whether it reached the caller
    (docs/interpretations.md: A lost reply)."""

    session: str
    turn: int
    text: str
    task: str | None = None
    suspended: bool = False
    kind: str | None = None
    message: str | None = None  # the user message the reply answers
    answer: dict[str, Any] | None = None  # or the decision it answers
    client_message_id: str | None = None
    delivered: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Lease:
    """The answer to `acquire_lease`: granted or not, who holds it, until when, and the stored
    session's version at that moment (the holder reloads when it differs from its copy)."""

    session: str
    holder: str
    expires: float
    granted: bool
    version: int = 0
    fence: int = 0  # the grant's fencing token (0 when not granted)
    taken_over: bool = False  # granted over another holder's lease that was never given back
    # read with the grant, in its own statement (SQLite) or flight (PostgreSQL), because the turn
    # needs both before it starts: the session's latest stored reply and its audit chain head
    last: ReplyRecord | None = None
    head: str | None = None


def new_holder() -> str:
    """A lease holder id unique to one turn: "<host>:<pid>:<random>". The host and pid let a later
    process of the same host see that the holder died (its lease is then free at once)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


# Holders of this process that hold a lease now, and the store each works through: a holder whose
# store was closed (a process "killed" in-process, as the scenario runner does) is as dead as a
# gone process. An entry lives from the grant to the lease given back (`release_holder`), so the
# map is bounded by the turns in progress (plus those whose store was closed under them, which
# never give their lease back and must go on answering dead).
_LOCAL: dict[str, "weakref.ref[Any]"] = {}


def register_holder(holder: str, store: Any) -> None:
    """Record that `holder` (of this process) holds a lease through `store`; see `holder_dead`."""
    _LOCAL[holder] = weakref.ref(store)


def release_holder(holder: str) -> None:
    """`holder` gave its lease back (or it expired): forget it."""
    _LOCAL.pop(holder, None)


def holder_dead(holder: str) -> bool:
    """True when `holder` names a process of this host that no longer runs, or a holder of this
    process whose store is gone or closed."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        ref = _LOCAL.get(holder)
        if ref is None:
            return False
        store = ref()
        return store is None or not getattr(store, "alive", lambda: True)()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, someone else's
        return False
    return False


@runtime_checkable
class UnitOfWork(Protocol):
    """The writes of one stopping point; committed together when the `with` block ends."""

    def put_session(self, state: SessionState, now: float, task: TaskState | None = None) -> None:
        """Write the session's own row (counters, platform, values, active task id) checking its
        version (`StoreConflict` when another writer got there first), and append the user
        messages and entities not stored yet. `state.version` is advanced. `task`: the session's
        open active task, carried in the row (its own row is not written; the reads find it
        there); without it the row carries no task."""

    def put_task(self, task: TaskState) -> None:
        """Insert or replace one task's own row (its nodes included): a task that ended, or that
        is not (or no longer) the one its session row carries."""

    def put_evidence(self, session: str, ev: Evidence) -> None:
        """Insert or replace one evidence record (ids are allocated from the session row's
        counter, which only the lease holder advances)."""

    def put_reply(self, reply: ReplyRecord) -> None:
        """Store a turn's reply (one per session and turn)."""

    def put_trace_head(self, session: str, head: str) -> None:
        """Store the hash of the session's latest trace event (its audit chain's head, a column
        of the session row: written by the unit's `put_session` when it has one), so a process
        that reopens the session continues the chain instead of restarting it."""


@runtime_checkable
class Store(Protocol):
    """Durable state of every session (docs/interpretations.md: A lost reply, One turn at a time)."""

    def unit(self, session: str | None = None, *, holder: str | None = None, expires: float | None = None,
             fence: int | None = None) -> AbstractContextManager[UnitOfWork]:
        """A unit of work: one transaction. With `holder`, the session's lease must be held by it
        (and carry the fencing token `fence`, when given) — else `LeaseLost` — and, where the
        store's `units_renew` is true (PostgreSQL), is renewed to `expires`. Commit failure:
        `StoreUnavailable`."""

    def acquire_lease(self, session: str, holder: str, now: float, ttl: float) -> Lease:
        """Take the session's lease for `holder` until now + ttl when it is free, expired, held by
        a dead process of this host, or held by `holder`; otherwise `granted` is False. A lease
        that cannot be decided in time (its row locked by a stuck transaction) is not granted."""

    def renew_lease(self, session: str, holder: str, fence: int, expires: float) -> bool:
        """The heartbeat: extend the lease to `expires` while `holder` still holds it with token
        `fence`; False when it does not (taken over: the turn must stop writing)."""

    def release_lease(self, session: str, holder: str, *, fence: int | None = None,
                      delivered_turn: int | None = None, trace_head: str | None = None) -> None:
        """Give the lease back (only when `holder` holds it, with `fence` when given), marking the
        reply of `delivered_turn` delivered and storing `trace_head` (the turn's last trace event,
        written after its last unit) first: both are columns of the session row, written while
        the lease is still held."""

    def mark_delivered(self, session: str, turn: int) -> None:
        """Record that the reply of `turn` reached its client (the client read it to its end)."""

    def get_session(self, session_id: str) -> SessionState | None:
        """The session with its history (messages, entities, task ids), or None."""

    def load_or_create(self, state: SessionState, now: float) -> SessionState | None:
        """The stored session `state.id` with its history, as `get_session` reads it; when there
        is none, `state` (a new session) is stored in a unit of its own and None is returned. One
        call, so opening a session by its id costs one hop off the event loop, not two; a session
        another process created at that moment is read instead."""

    def version_of(self, session_id: str) -> int:
        """The stored session's version (0 when absent): one indexed read, so a process can tell
        whether its copy of a session is still the latest (another process sharing the store may
        have committed a turn of it) before using it."""

    def get_task(self, session_id: str, task_id: str) -> TaskState | None:
        """One task of a session, or None."""

    def open_tasks(self, session_id: str) -> list[TaskState]:
        """Tasks of the session that are neither DONE, FAILED nor CANCELLED."""

    def session_head(self, session_id: str) -> SessionState | None:
        """The stored session's row alone (platform, counters, values, active task, version),
        history lists empty; None when there is no such session."""

    def evidence_of(self, session_id: str, since: int = 0) -> list[Evidence]:
        """Evidence of a session in creation order: all of it, or with `since` the records
        numbered `since` or later and every write still unsettled (STARTED, UNKNOWN,
        UNKNOWN_PRE_CALL), whatever its number: what a reopened session holds in memory."""

    def evidence_record(self, session_id: str, evidence_id: str) -> Evidence | None:
        """One evidence record by id, or None."""

    def last_reply(self, session_id: str) -> ReplyRecord | None:
        """The reply of the session's latest stored turn, or None."""

    def trace_head(self, session_id: str) -> str | None:
        """The session's stored audit chain head (see `UnitOfWork.put_trace_head`), or None."""

    def claim_nonce(self, nonce: str, now: float, keep: float) -> bool:
        """Record a signed request's nonce; False when it was recorded before (a replay), by any
        process sharing the store. Nonces older than `keep` seconds are forgotten (a request that
        old is refused by its timestamp anyway)."""

    def sessions(self) -> list[tuple[str, float]]:
        """(id, last update) of every session, newest first."""

    def raw(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """A read-only query, for tools and tests."""

    def close(self) -> None:
        """Release the connection(s)."""
