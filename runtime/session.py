"""The public runtime API: `Runtime` opens `Session`s; a session takes user turns and decisions.

A `Session` is the face: `send`, `answer`, `acknowledge`, `pending`, `state`, `id`. What it holds
in memory and the services it runs on are its `env` (`turn_env.TurnEnv`, the `seams.SessionEnv`
the working modules are given); a turn is played by `turn.run_turn` over that env (reload the
studio, then answer the pending question, reopen an interrupted node or start a new task; the
turn ends with a reply, docs/interpretations.md: Pending question, Restart, Reply). Every step is
a trace event.
"""
from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any, Callable

from skillc.runtime.graph import tasks
from skillc.runtime.durable import load_held
from skillc.runtime.words.errors import UnknownAgent
from skillc.runtime.call.lifecycle import FINAL, question_of
from skillc.runtime.model.base import Model
from skillc.runtime.seam.state import Evidence, SessionState, TaskState
from skillc.runtime.store import offloop
from skillc.runtime.store.base import Store as StoreProtocol
from skillc.runtime.graph.tasks import Reply
from skillc.runtime.outside.config import audit_key
from skillc.runtime.telemetry.trace import TraceWriter
from skillc.runtime.turn import run_turn
from skillc.runtime.turn_env import TurnEnv
from skillc.runtime.words.vocab import Suspension

if TYPE_CHECKING:
    from skillc.runtime.outside.config import Settings

__all__ = ["FINAL", "Reply", "Runtime", "Session"]


class Runtime:
    """Compiled skills + MCP gateway + model + store + settings: everything sessions run on."""

    def __init__(self, studio: Any, gateway: Any, model: Model, store: StoreProtocol, settings: Settings, *,
                 clock: Callable[[], float] = time.time, trace: TraceWriter | None = None,
                 on_progress: Callable[[str, str], None] | None = None, seed: int | None = None,
                 strict: bool = False) -> None:
        self.studio = studio
        # strict: an unexpected exception inside a turn propagates (tests, the scenario runner);
        # otherwise it is logged, recorded as an `error` event and answered, and the process lives.
        self.strict = strict
        self.gateway = gateway
        self.model = model
        self.store = store
        self.settings = settings
        self.clock = clock
        self.trace = trace or TraceWriter(key=audit_key())
        self.on_progress = on_progress
        self.rng = random.Random(seed)
        # A gateway built with `on_invoked=None` leaves reporting to the runtime: each session
        # passes its own callback with each call, so concurrent sessions never mix their events.
        # A gateway with its own callback (or none at all, a test double) is left alone.
        self.reports_invocations = getattr(gateway, "on_invoked", "absent") is None
        # False: a reply counts as delivered when `send`/`answer` returns it. A server sets True
        # and calls `Session.acknowledge` once its client has read the reply to its end.
        self.acknowledges_delivery = False

    async def aclose(self) -> None:
        """Close the parts this runtime was built with (gateway, model, store, trace)."""
        for part in (self.gateway, self.model):
            closer = getattr(part, "aclose", None)
            if closer is not None:
                await closer()
        for part in (self.store, self.trace):
            closer = getattr(part, "close", None)
            if closer is not None:
                closer()
        offloop.shutdown(self.store)

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def open_session(self, platform: dict[str, Any] | None = None, session_id: str | None = None) -> "Session":
        """A new session, or an existing one reopened from the store (its STARTED writes become
        UNKNOWN_PRE_CALL: their outcome is unknown after a restart)."""
        if session_id is None:  # a new id: stored now (a clash of random ids is a conflict)
            state = SessionState(id=f"s{int(self.clock() * 1000):x}{self.rng.randrange(16 ** 4):04x}",
                                 platform=dict(platform or {}))
            session = Session(self, state, {})
            await session.env.durable.commit()
            return session
        fresh = SessionState(id=session_id, platform=dict(platform or {}))
        # read, or stored as new when there is none: one call of the store (one hop off the loop)
        found = await offloop.call(self.store, self.store.load_or_create, fresh, self.clock())
        if found is None:
            return Session(self, fresh, {})
        state = found
        if platform:
            state.platform = dict(platform)
        evidence, task = await load_held(self.store, state)
        # with the lease free, what a dead process left (STARTED writes) is settled now;
        # otherwise by this session's first turn, under the lease, whoever's process runs it
        session = Session(self, state, evidence, task, recover=True)
        await session.env.durable.try_recover()
        return session


class Session:
    """One conversation: user turns and decisions in, replies out."""

    def __init__(self, runtime: Runtime, state: SessionState, evidence: dict[str, Evidence],
                 task: TaskState | None = None, *, recover: bool = False) -> None:
        self.rt = runtime
        self.env = TurnEnv(runtime, state, evidence, task, recover=recover)
        """The session in memory over the runtime's services (runtime/turn_env.py): what the
        working modules, the server's read-outs and tests reach; a turn goes through `send`/`answer`."""

    @property
    def id(self) -> str:
        """The session id."""
        return self.env.session.id

    async def send(self, text: str, client_message_id: str | None = None, *, agent: str | None = None) -> Reply:
        """A user message: answers a FOLLOW_UP, reopens an interrupted node, or starts a task.
        `client_message_id`: the caller's id of this message; a message sent
        again with the same id gets the reply already given and starts nothing
        (docs/interpretations.md: A lost reply).
        `agent`: the agent code the user picked; a task this message starts goes to it without
        routing (`agent.routed` with `via: "user"`); a message that answers a pending question
        or continues a running node is not routed at all, so it is ignored there.
        Raises UnknownAgent (nothing done) when `agent` is not a loadable agent, SessionBusy while
        another turn of the session runs, SessionUnavailable when the turn could not be stored
        (nothing of it kept)."""
        if agent is not None and agent not in (loadable := self.env.loadable_agents()):
            raise UnknownAgent(f"no loadable agent {agent!r} (loadable: {', '.join(loadable) or 'none'})")
        return await run_turn(self.env, message=text, client_message_id=client_message_id, agent=agent)

    async def answer(self, answer: dict[str, Any], client_message_id: str | None = None) -> Reply:
        """An explicit decision: {decision: CONFIRM|REJECT|CANCEL} or {verified: true|false}.
        A decision delivered twice (the same id, or the same decision while nothing waits for
        one) gets the first one's reply: one write, one answer."""
        return await run_turn(self.env, answer=answer, client_message_id=client_message_id)

    async def acknowledge(self, turn: int) -> None:
        """The caller received the reply of `turn` (a server that acknowledges delivery, see
        `Runtime.acknowledges_delivery`): it is not given again. Without this call, the session's
        next turn gives that reply first, and the same text sent again gets it and starts nothing."""
        await self.env.durable.acknowledge(turn)

    def pending(self) -> dict[str, Any] | None:
        """The open question, if the session waits on one: {kind, question, tool?, expected_fields?}."""
        env = self.env
        node = tasks.suspended_node(env.task)
        if node is None:
            return None
        out: dict[str, Any] = {"kind": node.suspended, "question": question_of(env, node), "node": node.id}
        if node.suspended == Suspension.APPROVAL and node.pending:
            out["tool"] = node.pending.tool
        if node.suspended == Suspension.FOLLOW_UP and node.follow_up:
            out["expected_fields"] = node.follow_up.expected_fields
        return out

    def state(self) -> dict[str, Any]:
        """A read-only summary: turn, tasks with node states, session values, entities, the active
        task's evidence (and any unsettled write), pending question."""
        env = self.env
        task = env.task
        return {
            "session": env.session.id,
            "turn": env.session.turn,
            "tasks": list(env.session.tasks),
            "active_task": None if task is None else {
                "id": task.id, "state": task.state, "agent": task.agent,
                "nodes": {n: {"skill": task.nodes[n].skill, "state": task.nodes[n].state,
                              "target": task.nodes[n].target} for n in task.order}},
            "values": dict(env.session.values),
            "entities": list(env.session.entities),
            # what the session holds: the active task's evidence and any unsettled write (a new
            # task and a reopening let the rest go); the whole record is GET …/evidence
            "evidence": {e.id: {"tool": e.tool, "status": e.status, "business_ok": e.business_ok}
                         for e in env.evidence.values()},
            "pending": self.pending(),
        }
