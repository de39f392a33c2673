"""The public runtime API: `Runtime` opens `Session`s; a session takes user turns and decisions.

Each turn: reload the studio (rejected skills reported), then answer the pending question,
reopen an interrupted node or start a new task (route, intent, plan, execute); the turn ends
with a reply (docs/interpretations.md: Pending question, Restart, Reply). Every step is a trace
event. The work of a turn is done by `tasks` (the graph), `node` (one node's loop), `chain` (one call) and
`evidence`; they reach the session only through `seams.SessionEnv`.
"""
from __future__ import annotations

import logging
import random
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable

from skillc.runtime import border, lifecycle, tasks
from skillc.runtime.paths import get_path
from skillc.runtime.values import has_value
from skillc.runtime.errors import ErrorName, UnknownAgent
from skillc.runtime.evidence import settle_write
from skillc.runtime.lifecycle import FINAL, finish_node, question_of
from skillc.runtime.model.base import Model, ModelError
from skillc.runtime.node import run_confirmed
from skillc.runtime.planner import PlanningFailed, choose_skills, plan, route
from skillc.runtime.state import Evidence, NodeState, SessionState, TaskState
from skillc.runtime.durable import Durability, load_held
from skillc.runtime.store import offloop
from skillc.runtime.store.base import ReplyRecord, StoreConflict, StoreError
from skillc.runtime.store.base import Store as StoreProtocol
from skillc.runtime.tasks import Reply
from skillc.runtime.telemetry.audit import TRIGGERS as AUDIT_TRIGGERS
from skillc.runtime.telemetry.audit import follow
from skillc.runtime.trace import TraceWriter
from skillc.runtime.vocab import DECISIONS, FINAL_TASK, OPEN_STATUSES, Decision, NodeStatus, Suspension, TaskStatus

if TYPE_CHECKING:
    from skillc.runtime.config import Settings
    from skillc.runtime.loader import ProviderInput
    from skillc.runtime.mcp.result import CallOutcome, ToolInfo

__all__ = ["FINAL", "Reply", "Runtime", "Session"]

log = logging.getLogger("skillc.runtime")


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
        self.trace = trace or TraceWriter()
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
        state = await offloop.call(self.store, self.store.get_session, session_id) if session_id else None
        if state is None:
            state = SessionState(id=session_id or f"s{int(self.clock() * 1000):x}{self.rng.randrange(16 ** 4):04x}",
                                 platform=dict(platform or {}))
            session = Session(self, state, {})
            try:
                await session._durable.commit()
            except StoreConflict:
                if session_id is None:
                    raise
                # created at this moment by another process: open theirs
                return await self.open_session(platform, session_id)
            return session
        if platform:
            state.platform = dict(platform)
        evidence, task = await load_held(self.store, state)
        session = Session(self, state, evidence)
        session.task = task
        # with the lease free, what a dead process left (STARTED writes) is settled now;
        # otherwise by this session's first turn, under the lease, whoever's process runs it
        session._durable.recover = True
        await session._durable.try_recover()
        return session


class Session:
    """One conversation. The runtime's internals reach the session's state through this object."""

    def __init__(self, runtime: Runtime, state: SessionState, evidence: dict[str, Evidence]) -> None:
        self.rt = runtime
        self.session = state
        self.evidence = evidence
        self.task: TaskState | None = None
        self.settings = runtime.settings
        self.rng = runtime.rng
        self._dirty: dict[str, Evidence] = {}
        self._studio: tuple[dict[str, Any], dict[Any, Any]] | None = None  # the turn's studio (_reload)
        self.current_node: str | None = None  # the node whose tool call is under way
        self._ended: TaskState | None = None  # the active task, when it had ended before this turn
        self._durable = Durability(self)  # lease, units of work, lost replies

    # ------------------------------------------------------------ public API

    @property
    def id(self) -> str:
        """The session id."""
        return self.session.id

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
        if agent is not None and agent not in (loadable := self.loadable_agents()):
            raise UnknownAgent(f"no loadable agent {agent!r} (loadable: {', '.join(loadable) or 'none'})")
        return await self._turn(message=text, client_message_id=client_message_id, agent=agent)

    async def answer(self, answer: dict[str, Any], client_message_id: str | None = None) -> Reply:
        """An explicit decision: {decision: CONFIRM|REJECT|CANCEL} or {verified: true|false}.
        A decision delivered twice (the same id, or the same decision while nothing waits for
        one) gets the first one's reply: one write, one answer."""
        return await self._turn(answer=answer, client_message_id=client_message_id)

    async def acknowledge(self, turn: int) -> None:
        """The caller received the reply of `turn` (a server that acknowledges delivery, see
        `Runtime.acknowledges_delivery`): it is not given again. Without this call, the session's
        next turn gives that reply first, and the same text sent again gets it and starts nothing."""
        await self._durable.acknowledge(turn)

    def pending(self) -> dict[str, Any] | None:
        """The open question, if the session waits on one: {kind, question, tool?, expected_fields?}."""
        node = tasks.suspended_node(self.task)
        if node is None:
            return None
        out: dict[str, Any] = {"kind": node.suspended, "question": question_of(self, node), "node": node.id}
        if node.suspended == Suspension.APPROVAL and node.pending:
            out["tool"] = node.pending.tool
        if node.suspended == Suspension.FOLLOW_UP and node.follow_up:
            out["expected_fields"] = node.follow_up.expected_fields
        return out

    def state(self) -> dict[str, Any]:
        """A read-only summary: turn, tasks with node states, session values, entities, the active
        task's evidence (and any unsettled write), pending question."""
        task = self.task
        return {
            "session": self.session.id,
            "turn": self.session.turn,
            "tasks": list(self.session.tasks),
            "active_task": None if task is None else {
                "id": task.id, "state": task.state, "agent": task.agent,
                "nodes": {n: {"skill": task.nodes[n].skill, "state": task.nodes[n].state,
                              "target": task.nodes[n].target} for n in task.order}},
            "values": dict(self.session.values),
            "entities": list(self.session.entities),
            # what the session holds: the active task's evidence and any unsettled write (a new
            # task and a reopening let the rest go); the whole record is GET …/evidence
            "evidence": {e.id: {"tool": e.tool, "status": e.status, "business_ok": e.business_ok}
                         for e in self.evidence.values()},
            "pending": self.pending(),
        }

    # ------------------------------------------------------------ helpers used across the runtime

    @property
    def platform(self) -> dict[str, Any]:
        """The platform identity of §11."""
        return self.session.platform

    @property
    def catalog(self) -> Mapping[str, ToolInfo]:
        """The MCP gateway's tool catalog."""
        return self.rt.gateway.catalog

    @property
    def model(self) -> Model:
        """The model adapter."""
        return self.rt.model

    def now(self) -> float:
        """The runtime clock."""
        return self.rt.clock()

    def emit(self, type_: str, *, node: str | None = None, before_turn: bool = False, **fields: Any) -> None:
        """Record one trace event of this session's turn. `before_turn`: an event its service
        noticed as it starts the session's next turn (`studio.stale`), recorded as that turn's
        and with no task (none is this turn's yet)."""
        trace = self.rt.trace
        if before_turn:
            trace.emit(type_, session=self.session.id, turn=self.session.turn + 1, node=node, **fields)
            return
        # A task that had already ended when this turn began is not this turn's task: the turn's
        # events carry no task until a new one is made (or name the task they act on).
        task = self.task if self.task is not None and self.task is not self._ended else None
        event = trace.emit(type_, session=self.session.id, turn=self.session.turn,
                           task=task.id if task else None, node=node, **fields)
        if type_ in AUDIT_TRIGGERS and trace.audit:  # who, what and when, from this session's facts
            for audit_type, audit_fields in follow(event, self, trace.chain):
                trace.emit(audit_type, session=self.session.id, turn=self.session.turn, **audit_fields)

    def invoked(self, tool: str, args: dict[str, Any]) -> None:
        """An `mcp.invoked` event for a tool really reached, stamped with the calling node."""
        self.emit("mcp.invoked", node=self.current_node, tool=tool, args=args)

    async def call_tool(self, node: NodeState, tool: str, args: dict[str, Any]) -> CallOutcome:
        """Call a business tool for `node`; a gateway that leaves reporting to the runtime gets
        this session's callback with the call (never a runtime-wide slot)."""
        self.current_node = node.id
        await self._durable.fence()  # a turn that lost its lease sends nothing
        if self.rt.reports_invocations:
            return await self.rt.gateway.call(tool, args, on_invoked=self.invoked)
        return await self.rt.gateway.call(tool, args)

    def _skills(self) -> dict[str, Any]:
        """The studio's skill modules: during a turn, those of the studio as the turn began."""
        return self._studio[0] if self._studio is not None else self.rt.studio.skills

    def _agents(self) -> dict[Any, Any]:
        """The studio's agent templates: during a turn, those of the studio as the turn began."""
        return self._studio[1] if self._studio is not None else self.rt.studio.agents

    def skill_module(self, key: str) -> Any:
        """The generated module of a loaded skill."""
        return self._skills()[key]

    def loadable_agents(self) -> list[str]:
        """Agents with at least one loadable skill."""
        return [code for code, a in sorted(self._agents().items()) if self.agent_skills(code)]

    def agent_skills(self, agent: str | None = None) -> list[str]:
        """The loadable skills of an agent (the active task's when None)."""
        code = agent or (self.task.agent if self.task else None)
        template = self._agents().get(code)
        if template is None:
            return []
        return [k for k in template.skills if k in self._skills()]

    def agent_delegables(self) -> list[str]:
        """The skills of the active task's agent that a node may delegate to: the compiled
        template's delegation catalog (delegatable and read-only, §15), as far as they are loaded."""
        template = self._agents().get(self.task.agent if self.task else None)
        if template is None:
            return []
        loaded = set(self.agent_skills())
        return [k for k in template.delegation_catalog if k in loaded]

    def provider_inputs(self, agent: str, skill: str) -> tuple[ProviderInput, ...]:
        """The provider inputs of `skill` in `agent`'s compiled template (§7), contract order."""
        template = self._agents().get(agent)
        return template.providers.get(skill, ()) if template is not None else ()

    def agent_profile(self, agent: str | None = None) -> dict[str, Any]:
        """An agent's descriptions, for prompts."""
        code = agent or (self.task.agent if self.task else "")
        t = self._agents()[code]
        return {f: getattr(t, f) for f in ("agent_code", "agent_name", "identity_desc", "mission_desc",
                                           "boundary_desc", "style_desc", "principle_desc")}

    def value_exists(self, prefix: str | None, parts: Any) -> bool:
        """A shared.* / session.* value exists at `parts`."""
        if not parts:
            return False
        pool = self.session.values if prefix == "session" else (self.task.shared if self.task else {})
        return has_value(get_path(pool, tuple(tuple(p) for p in parts)))

    async def find_evidence(self, evidence_id: str) -> Evidence | None:
        """An evidence record by id: held in memory, else an earlier task's from the store
        (a reopened session holds only its active task's, see durable.load_held), read off the
        event loop like every store call: a slow read stalls this turn, never the others."""
        held = self.evidence.get(evidence_id)
        if held is not None or not evidence_id:
            return held
        return await offloop.call(self.rt.store, self.rt.store.evidence_record, self.session.id, evidence_id)

    def put_evidence(self, ev: Evidence) -> None:
        """Mark an evidence record changed."""
        # Written at the next save(): every model step ends with one, and a write's STARTED
        # pre-registration saves before its tool is called.
        self._dirty[ev.id] = ev

    async def save(self) -> None:
        """A stopping point inside a turn: a write pre-registered or settled since the last
        commit is committed now (before its tool is called / once its outcome is known);
        everything else is committed once, with the turn's reply (runtime/durable.py)."""
        await self._durable.checkpoint()

    def progress(self, node: NodeState, tool: str) -> None:
        """Report that `tool` starts to the runtime's progress callback, with its label."""
        if self.rt.on_progress is None:
            return
        meta = self.skill_module(node.skill).TOOLS.get(tool)
        info = self.catalog.get(tool)
        label = (meta.label if meta and meta.label else None) or (info.title if info and info.title else None) or "正在处理"
        self.rt.on_progress(tool, label)

    def add_delegate(self, parent: NodeState, skill: str, objective: str) -> NodeState:
        """Insert a delegate node before `parent` (§15)."""
        return tasks.add_delegate(self, parent, skill, objective)

    def share_outputs(self, node: NodeState) -> None:
        """§8 at DONE: share a node's outputs and index its entities."""
        tasks.share_outputs(self, node)

    # ------------------------------------------------------------ turns

    async def _turn(self, message: str | None = None, answer: dict[str, Any] | None = None,
                    client_message_id: str | None = None, agent: str | None = None) -> Reply:
        # text from outside is kept only in a form that can be kept (runtime/border.py)
        message, answer = border.safe(message), border.safe(answer)
        client_message_id = border.safe(client_message_id)
        durable = self._durable
        async with durable.turn() as late:
            # answered already (its reply lost, or a decision delivered twice): that reply again
            same = durable.repeated(message, answer, client_message_id)
            try:
                reply = await self._play(message, answer, client_message_id, same, agent)
            except StoreError as exc:
                raise await durable.fail(exc) from exc
            finally:
                self._studio = None  # between turns the live studio answers (see _reload)
            if late is not None and same is None:  # a reply a dead turn never delivered comes first ("A lost reply")
                reply.text = f"{late.text}\n\n{reply.text}"
            record = ReplyRecord(session=self.id, turn=self.session.turn, text=reply.text, task=reply.task,
                                 suspended=reply.suspended, kind=reply.kind, message=message, answer=answer,
                                 client_message_id=client_message_id)
            try:
                await durable.commit(record, handed=late)
            except StoreError as exc:
                raise await durable.fail(exc) from exc
            durable.delivered = self.session.turn
            self.emit("turn.reply", text=reply.text, suspended=reply.suspended)
            self.rt.trace.flush()  # the turn's end is a stopping point of the trace file too
            return reply

    async def _play(self, message: str | None, answer: dict[str, Any] | None, client_message_id: str | None,
                    same: ReplyRecord | None, agent: str | None = None) -> Reply:
        self.rt.trace.enter(self)  # this task's trace context: audit events and telemetry find their session
        self.session.turn += 1
        self._ended = self.task if self.task is not None and self.task.state in FINAL_TASK else None
        self.emit("turn.started", **({"message": message} if message is not None else {"answer": answer}))
        self._reload()
        if message is not None:
            entry: dict[str, Any] = {"turn": self.session.turn, "text": message}
            if client_message_id is not None:
                entry["client_message_id"] = client_message_id
            self.session.user_messages.append(entry)
        if same is not None:  # nothing is started: the stored reply is given again
            self.emit("turn.replayed", of_turn=same.turn)
            return Reply(same.text, same.suspended, same.kind, same.task)
        try:
            return await self._handle(message, answer, agent)
        except StoreError:
            raise  # the turn cannot be kept: the session is reloaded, the caller told
        except ModelError as exc:
            self.emit("error", message=str(exc), code=ModelError.name)
            # kind names the failure, so a reply given again (the same message re-sent) still says it failed
            return Reply(f"error: {exc}", False, ModelError.name, task=self.task.id if self.task else None)
        except PlanningFailed as exc:
            return self._planning_failed(exc)
        except Exception as exc:  # a runtime bug must not take the serving process down
            if self.rt.strict:
                raise
            log.exception("internal error in session %s, turn %s", self.session.id, self.session.turn)
            self.emit("error", message=f"internal error: {type(exc).__name__}: {exc}")
            return Reply(f"Something went wrong on our side ({type(exc).__name__}); the session is kept "
                         "and can continue.", False, task=self.task.id if self.task else None)

    def _reload(self) -> None:
        """Refresh the studio, then pin it for the turn: a refresh meanwhile (another session's
        turn, the studio feed) swaps whole dicts, so the pinned ones stay one consistent studio
        and a node never meets two versions of its contract within one turn."""
        studio = self.rt.studio
        if hasattr(studio, "refresh"):
            studio.refresh()
        self._studio = (studio.skills, studio.agents)
        for key, diags in sorted(getattr(studio, "rejected", {}).items()):
            self.emit("skill.rejected", skill=key,
                      diagnostics=[{"code": d.get("code"), "message": d.get("message")} for d in diags])

    async def _handle(self, message: str | None, answer: dict[str, Any] | None, agent: str | None = None) -> Reply:
        task = self.task
        if task is not None and task.state not in FINAL_TASK:
            node = tasks.suspended_node(task)
            if node is not None:
                return await self._resume(node, message, answer)
            running = tasks.running_node(task)
            if running is not None and message is not None:
                running.messages.append({"role": "user", "content": message})
                return await tasks.execute(self)
        if message is None:
            return Reply("Nothing is waiting for a decision.", False)
        return await self._new_task(message, agent)

    async def _new_task(self, message: str, chosen: str | None = None) -> Reply:
        tid = f"t{self.session.next_task}"
        self.session.next_task += 1
        # Earlier tasks' settled records leave memory, as when the session is reopened
        # (durable.load_held): a node sees only its own task's evidence (§9), and a long session
        # holds as few records at turn 1,000 as at turn 10 (found by id in the store if asked).
        self.evidence = {eid: ev for eid, ev in self.evidence.items() if ev.status in OPEN_STATUSES}
        self.task = TaskState(id=tid, session=self.session.id, agent="", message=message, turn=self.session.turn,
                              evidence_from=self.session.next_evidence)
        self.session.tasks.append(tid)
        self.session.active_task = tid
        if chosen is None:
            agent, via = await route(self, message)
        elif chosen in self.loadable_agents():
            agent, via = chosen, "user"  # the user picked it: no routing
        else:  # loadable when sent, but the studio reloaded at this turn's start dropped it
            raise PlanningFailed(ErrorName.SKILL_NOT_FOUND, f"agent {chosen} has no loadable skill any more")
        self.task.agent = agent
        self.emit("agent.routed", agent=agent, via=via)
        candidates = await choose_skills(self, agent, message)
        nodes, how = await plan(self, agent, candidates, message)
        tasks.add_planned(self, nodes, how)
        await self.save()
        return await tasks.execute(self)

    def _planning_failed(self, exc: PlanningFailed) -> Reply:
        if self.task is not None:
            self.task.state = TaskStatus.FAILED
            self.task.reason = exc.name
            self.emit("task.finished", state=TaskStatus.FAILED, reason=exc.name, message=str(exc))
        return Reply(f"I could not plan this: {exc}", False, task=self.task.id if self.task else None)

    async def _resume(self, node: NodeState, message: str | None, answer: dict[str, Any] | None) -> Reply:
        kind = node.suspended
        task = tasks.active_task(self)
        if kind == Suspension.FOLLOW_UP:
            if message is None:
                return Reply(question_of(self, node), True, kind)
            fu = node.follow_up
            assert fu is not None  # a FOLLOW_UP suspension holds its question
            fu.answer, fu.answered_turn = message, self.session.turn
            node.answered, node.follow_up = fu, None
            self.emit("node.resumed", node=node.id, kind=kind, answer=message)
            node.messages.append({"role": "user", "content": f"Answer to your question \"{fu.question}\""
                                  f"{' (fields: ' + ', '.join(fu.expected_fields) + ')' if fu.expected_fields else ''}: {message}"})
            return await tasks.execute(self)
        if answer is None:
            return Reply(question_of(self, node), True, kind, task.id)
        if kind == Suspension.VERIFY:
            verified = answer.get("verified")
            if not isinstance(verified, bool):
                return Reply("Answer with verified: true or false. " + question_of(self, node), True, kind, task.id)
            self.emit("node.resumed", node=node.id, kind=kind, answer=answer)
            ev = self.evidence[node.verify_evidence or ""]
            node.verify_evidence = None
            settle_write(self, node, ev, verified, via="user")
            return await tasks.execute(self)
        decision = answer.get("decision")
        if decision not in DECISIONS:
            return Reply("Answer with decision CONFIRM, REJECT or CANCEL. " + question_of(self, node), True, kind, task.id)
        self.emit("node.resumed", node=node.id, kind=kind, answer=answer)
        pending = node.pending
        assert pending is not None  # an APPROVAL suspension holds the gated call
        if decision == Decision.CONFIRM:
            if self.now() - pending.asked_at > self.settings.reconfirm_after:
                pending.asked_at = self.now()  # the runtime asks again, no model step ("Re-confirmation")
                lifecycle.ask(node, Suspension.APPROVAL)
                lifecycle.suspend(self, node)
                return Reply(question_of(self, node), True, kind, task.id)
            if await run_confirmed(self, node) == lifecycle.SUSPENDED and node.suspended == Suspension.APPROVAL:
                # what would run now is not what was confirmed (re-bound arguments): asked again
                return Reply(question_of(self, node), True, kind, task.id)
            return await tasks.execute(self)
        node.pending = None
        tool = pending.tool
        if decision == Decision.REJECT:
            finish_node(self, node, NodeStatus.CANCELLED, reason=f"the user rejected {tool}")
        return tasks.cancel_task(self, f"the user {'rejected' if decision == Decision.REJECT else 'cancelled'} {tool}; "
                                 f"nothing was changed:\n{pending.summary}")
