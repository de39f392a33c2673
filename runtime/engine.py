"""The public runtime API: `Runtime` opens `Session`s; a session takes user turns and decisions.

Each turn: reload the studio (rejected skills reported), then answer the pending question
(DESIGN decision 8), reopen an interrupted node (decision 7) or start a new task (route, intent,
plan, execute); the turn ends with a reply (decision 9). Every step is a trace event.
"""
from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from typing import Any, Callable

from skillc.runtime import support as rt
from skillc.runtime.chain import run_chain
from skillc.runtime.completion import resolve_target
from skillc.runtime.context import NodeContext
from skillc.runtime.model.base import Model, ModelError
from skillc.runtime.node import after_call, finish_node, question_of, record, run_node, settle_write, suspend
from skillc.runtime.planner import PlanningFailed, choose_skills, plan, route
from skillc.runtime.prompting import step_messages
from skillc.runtime.state import Evidence, NodeState, SessionState, TaskState
from skillc.runtime.store import Store
from skillc.runtime.trace import TraceWriter

FINAL = ("DONE", "FAILED", "CANCELLED", "SKIPPED")
log = logging.getLogger("skillc.runtime")


@dataclass
class Reply:
    """What a turn says back: the text, and whether the session waits on a question."""

    text: str
    suspended: bool = False
    kind: str | None = None
    task: str | None = None


class Runtime:
    """Compiled skills + MCP gateway + model + store + settings: everything sessions run on."""

    def __init__(self, studio: Any, gateway: Any, model: Model, store: Store, settings: Any, *,
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
        self.current: Session | None = None  # the session whose turn is running
        if getattr(gateway, "on_invoked", "absent") is None:
            gateway.on_invoked = self._invoked  # real servers: the runtime's client reports tools/call

    def _invoked(self, tool: str, args: dict[str, Any]) -> None:
        if self.current is not None:
            self.current.invoked(tool, args)

    async def open_session(self, platform: dict[str, Any] | None = None, session_id: str | None = None) -> "Session":
        """A new session, or an existing one reopened from the store (its STARTED writes become
        UNKNOWN_PRE_CALL: their outcome is unknown after a restart)."""
        state = self.store.get_session(session_id) if session_id else None
        if state is None:
            state = SessionState(id=session_id or f"s{int(self.clock() * 1000):x}{self.rng.randrange(16 ** 4):04x}",
                                 platform=dict(platform or {}))
            session = Session(self, state, {})
            session.save()
            return session
        if platform:
            state.platform = dict(platform)
        evidence = {e.id: e for e in self.store.evidence_of(state.id)}
        session = Session(self, state, evidence)
        for ev in evidence.values():
            if ev.status == "STARTED":
                ev.status = "UNKNOWN_PRE_CALL"
                self.store.put_evidence(state.id, ev)
        if state.active_task:
            session.task = self.store.get_task(state.id, state.active_task)
        self.store.commit()
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
        self.current_node: str | None = None  # the node whose tool call is under way
        self._ended: TaskState | None = None  # the active task, when it had ended before this turn

    # ------------------------------------------------------------ public API

    @property
    def id(self) -> str:
        """The session id."""
        return self.session.id

    async def send(self, text: str) -> Reply:
        """A user message: answers a FOLLOW_UP, reopens an interrupted node, or starts a task."""
        return await self._turn(message=text)

    async def answer(self, answer: dict[str, Any]) -> Reply:
        """An explicit decision: {decision: CONFIRM|REJECT|CANCEL} or {verified: true|false}."""
        return await self._turn(answer=answer)

    def pending(self) -> dict[str, Any] | None:
        """The open question, if the session waits on one: {kind, question, tool?, expected_fields?}."""
        node = self._suspended_node()
        if node is None:
            return None
        out: dict[str, Any] = {"kind": node.suspended, "question": question_of(self, node), "node": node.id}
        if node.suspended == "APPROVAL" and node.pending:
            out["tool"] = node.pending.tool
        if node.suspended == "FOLLOW_UP" and node.follow_up:
            out["expected_fields"] = node.follow_up.expected_fields
        return out

    def state(self) -> dict[str, Any]:
        """A read-only summary: turn, tasks with node states, session values, entities, evidence."""
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
            "evidence": {e.id: {"tool": e.tool, "status": e.status, "business_ok": e.business_ok}
                         for e in self.evidence.values()},
            "pending": self.pending(),
        }

    # ------------------------------------------------------------ helpers used across the runtime

    @property
    def platform(self) -> dict[str, Any]:
        return self.session.platform

    @property
    def catalog(self) -> dict[str, Any]:
        return self.rt.gateway.catalog

    def now(self) -> float:
        return self.rt.clock()

    def emit(self, type_: str, *, node: str | None = None, **fields: Any) -> None:
        # A task that had already ended when this turn began is not this turn's task: the turn's
        # events carry no task until a new one is made (or name the task they act on).
        task = self.task if self.task is not None and self.task is not self._ended else None
        self.rt.trace.emit(type_, session=self.session.id, turn=self.session.turn,
                           task=task.id if task else None, node=node, **fields)

    def invoked(self, tool: str, args: dict[str, Any]) -> None:
        """An `mcp.invoked` event for a tool really reached, stamped with the calling node."""
        self.emit("mcp.invoked", node=self.current_node, tool=tool, args=args)

    def skill_module(self, key: str) -> Any:
        return self.rt.studio.skills[key]

    def loadable_agents(self) -> list[str]:
        return [code for code, a in sorted(self.rt.studio.agents.items()) if self.agent_skills(code)]

    def agent_skills(self, agent: str | None = None) -> list[str]:
        code = agent or (self.task.agent if self.task else None)
        template = self.rt.studio.agents.get(code)
        if template is None:
            return []
        return [k for k in template.skills if k in self.rt.studio.skills]

    def agent_delegables(self) -> list[str]:
        out = []
        for key in self.agent_skills():
            m = self.skill_module(key)
            if m.SKILL.delegatable and not any(t.side_effect == "WRITE" for t in m.TOOLS.values()):
                out.append(key)
        return out

    def agent_profile(self, agent: str | None = None) -> dict[str, Any]:
        code = agent or (self.task.agent if self.task else "")
        t = self.rt.studio.agents[code]
        return {f: getattr(t, f) for f in ("agent_code", "agent_name", "identity_desc", "mission_desc",
                                           "boundary_desc", "style_desc", "principle_desc")}

    def value_exists(self, prefix: str | None, parts: Any) -> bool:
        if not parts:
            return False
        pool = self.session.values if prefix == "session" else (self.task.shared if self.task else {})
        return rt.has_value(rt.get_path(pool, tuple(tuple(p) for p in parts)))

    def register_evidence(self, ev: Evidence, *, store: bool = True) -> None:
        ev.id = f"e{self.session.next_evidence}"
        ev.seq = self.session.next_evidence
        self.session.next_evidence += 1
        self.evidence[ev.id] = ev
        node = self.task.nodes.get(ev.node) if self.task else None
        if node is not None:
            node.evidence.append(ev.id)
        if ev.idem_key and self.task is not None:
            self.task.idem[ev.idem_key] = ev.id
        if store:
            self.put_evidence(ev)

    def put_evidence(self, ev: Evidence) -> None:
        # Written at the next save(): every model step ends with one, and a write's STARTED
        # pre-registration saves before its tool is called.
        self._dirty[ev.id] = ev

    def save(self) -> None:
        """Write the session, its active task and changed evidence, and commit."""
        store = self.rt.store
        for ev in self._dirty.values():
            store.put_evidence(self.session.id, ev)
        self._dirty.clear()
        store.put_session(self.session, self.now())
        if self.task is not None:
            store.put_task(self.task)
        store.commit()

    def progress(self, node: NodeState, tool: str) -> None:
        if self.rt.on_progress is None:
            return
        meta = self.skill_module(node.skill).TOOLS.get(tool)
        info = self.catalog.get(tool)
        label = (meta.label if meta and meta.label else None) or (info.title if info and info.title else None) or "正在处理"
        self.rt.on_progress(tool, label)

    def add_delegate(self, parent: NodeState, skill: str, objective: str) -> NodeState:
        task = self.task
        count = task.counters.get("delegate", 0) + 1
        while f"d{count}" in task.nodes:  # a planned node may already be called d1
            count += 1
        task.counters["delegate"] = count
        child = NodeState(id=f"d{count}", task=task.id, skill=skill, kind="delegate", depth=parent.depth + 1,
                          parent=parent.id, objective=objective or f"Prerequisite for {parent.skill}",
                          target=resolve_target(self.skill_module(skill), None))
        task.nodes[child.id] = child
        task.order.insert(task.order.index(parent.id), child.id)
        parent.deps.append(child.id)
        parent.delegations.append({"node": child.id, "skill": skill, "objective": objective})
        return child

    def complete_outputs(self, node: NodeState) -> None:
        """§8 at DONE: share outputs to shared.* / session.*, entities from outputs."""
        module = self.skill_module(node.skill)
        for key, got in node.outputs.items():
            spec = module.OUTPUTS.get(key)
            if spec is None:
                continue
            if spec.share == "TASK":
                self.task.shared[key] = got["value"]
            elif spec.share == "SESSION":
                self.session.values[key] = got["value"]
            if spec.entity is not None:
                for ent in rt.make_entities(got["value"], spec.entity):
                    self.session.entities.append(dict(ent, task=self.task.id, node=node.id))

    # ------------------------------------------------------------ turns

    def _suspended_node(self) -> NodeState | None:
        if self.task is None or self.task.state in FINAL:
            return None
        for nid in self.task.order:
            n = self.task.nodes[nid]
            if n.state == "SUSPENDED":
                return n
        return None

    async def _turn(self, message: str | None = None, answer: dict[str, Any] | None = None) -> Reply:
        self.rt.current = self
        self.session.turn += 1
        self._ended = self.task if self.task is not None and self.task.state in FINAL else None
        self.emit("turn.started", **({"message": message} if message is not None else {"answer": answer}))
        self._reload()
        if message is not None:
            self.session.user_messages.append({"turn": self.session.turn, "text": message})
        try:
            reply = await self._handle(message, answer)
        except ModelError as exc:
            self.emit("error", message=str(exc))
            reply = Reply(f"error: {exc}", False, task=self.task.id if self.task else None)
        except PlanningFailed as exc:
            reply = self._planning_failed(exc)
        except Exception as exc:  # a runtime bug must not take the serving process down
            if self.rt.strict:
                raise
            log.exception("internal error in session %s, turn %s", self.session.id, self.session.turn)
            self.emit("error", message=f"internal error: {type(exc).__name__}: {exc}")
            reply = Reply(f"Something went wrong on our side ({type(exc).__name__}); the session is kept "
                          "and can continue.", False, task=self.task.id if self.task else None)
        self.save()
        self.emit("turn.reply", text=reply.text, suspended=reply.suspended)
        return reply

    def _reload(self) -> None:
        studio = self.rt.studio
        if hasattr(studio, "refresh"):
            studio.refresh()
        for key, diags in sorted(getattr(studio, "rejected", {}).items()):
            self.emit("skill.rejected", skill=key,
                      diagnostics=[{"code": d.get("code"), "message": d.get("message")} for d in diags])

    async def _handle(self, message: str | None, answer: dict[str, Any] | None) -> Reply:
        task = self.task
        if task is not None and task.state not in FINAL:
            node = self._suspended_node()
            if node is not None:
                return await self._resume(node, message, answer)
            running = next((task.nodes[n] for n in task.order if task.nodes[n].state == "RUNNING"), None)
            if running is not None and message is not None:
                running.messages.append({"role": "user", "content": message})
                return await self._execute()
        if message is None:
            return Reply("Nothing is waiting for a decision.", False)
        return await self._new_task(message)

    async def _new_task(self, message: str) -> Reply:
        tid = f"t{self.session.next_task}"
        self.session.next_task += 1
        self.task = TaskState(id=tid, session=self.session.id, agent="", message=message, turn=self.session.turn)
        self.session.tasks.append(tid)
        self.session.active_task = tid
        agent, via = await route(self, message)
        self.task.agent = agent
        self.emit("agent.routed", agent=agent, via=via)
        candidates = await choose_skills(self, agent, message)
        nodes, how = await plan(self, agent, candidates, message)
        for p in nodes:
            # §1.2: a provider node is titled by its skill's semantic_desc (skill_name when empty)
            meta = self.skill_module(p.skill).SKILL
            title = (meta.semantic_desc or meta.name) if p.kind == "provider" else ""
            self.task.nodes[p.node] = NodeState(id=p.node, task=tid, skill=p.skill, kind=p.kind, deps=list(p.deps),
                                                target=p.target, objective=title)
            self.task.order.append(p.node)
        self.emit("task.planned", via=how, nodes=[{"node": p.node, "skill": p.skill, "target": p.target,
                                                   "deps": list(p.deps), "kind": p.kind} for p in nodes])
        self.save()
        return await self._execute()

    def _planning_failed(self, exc: PlanningFailed) -> Reply:
        if self.task is not None:
            self.task.state = "FAILED"
            self.task.reason = exc.name
            self.emit("task.finished", state="FAILED", reason=exc.name, message=str(exc))
        return Reply(f"I could not plan this: {exc}", False, task=self.task.id if self.task else None)

    async def _resume(self, node: NodeState, message: str | None, answer: dict[str, Any] | None) -> Reply:
        kind = node.suspended
        if kind == "FOLLOW_UP":
            if message is None:
                return Reply(question_of(self, node), True, kind)
            fu = node.follow_up
            fu.answer, fu.answered_turn = message, self.session.turn
            node.answered, node.follow_up = fu, None
            self.emit("node.resumed", node=node.id, kind=kind, answer=message)
            node.messages.append({"role": "user", "content": f"Answer to your question \"{fu.question}\""
                                  f"{' (fields: ' + ', '.join(fu.expected_fields) + ')' if fu.expected_fields else ''}: {message}"})
            return await self._execute()
        if answer is None:
            return Reply(question_of(self, node), True, kind, self.task.id)
        if kind == "VERIFY":
            verified = answer.get("verified")
            if not isinstance(verified, bool):
                return Reply("Answer with verified: true or false. " + question_of(self, node), True, kind, self.task.id)
            self.emit("node.resumed", node=node.id, kind=kind, answer=answer)
            ev = self.evidence[node.verify_evidence]
            node.verify_evidence = None
            settle_write(self, node, ev, verified, via="user")
            return await self._execute()
        decision = answer.get("decision")
        if decision not in ("CONFIRM", "REJECT", "CANCEL"):
            return Reply("Answer with decision CONFIRM, REJECT or CANCEL. " + question_of(self, node), True, kind, self.task.id)
        self.emit("node.resumed", node=node.id, kind=kind, answer=answer)
        pending = node.pending
        if decision == "CONFIRM":
            if self.now() - pending.asked_at > self.settings.reconfirm_after:
                pending.asked_at = self.now()  # decision 18: the runtime asks again, no model step
                node.suspended = "APPROVAL"
                suspend(self, node)
                return Reply(question_of(self, node), True, kind, self.task.id)
            node.state, node.suspended = "RUNNING", None
            result = await run_chain(self, node, pending.tool, pending.args, approved=True)
            node.pending = None if result.error != "APPROVAL_REQUIRED" else node.pending
            record(self, node, pending.tool, result, call_id=None)
            after_call(self, node, result)
            return await self._execute()
        node.pending = None
        tool = pending.tool
        if decision == "REJECT":
            finish_node(self, node, "CANCELLED", reason=f"the user rejected {tool}")
        return self._cancel_task(f"the user {'rejected' if decision == 'REJECT' else 'cancelled'} {tool}; "
                                 f"nothing was changed:\n{pending.summary}")

    def _cancel_task(self, reason: str) -> Reply:
        for nid in self.task.order:
            n = self.task.nodes[nid]
            if n.state not in FINAL:
                finish_node(self, n, "CANCELLED", reason=reason)
        self.task.state, self.task.reason = "CANCELLED", reason
        self.emit("task.finished", state="CANCELLED", reason=reason)
        return Reply(f"Cancelled: {reason}", False, task=self.task.id)

    # ------------------------------------------------------------ executing a task graph

    def _next_node(self) -> NodeState | None:
        task = self.task
        for nid in task.order:
            n = task.nodes[nid]
            if n.state in FINAL:
                continue
            if all(task.nodes[d].state in FINAL for d in n.deps if d in task.nodes):
                return n
        return None

    async def _execute(self) -> Reply:
        task = self.task
        task.state = "RUNNING"
        while True:
            node = self._next_node()
            if node is None:
                break
            if node.state == "PENDING":
                if not self._start(node):
                    continue
                # durable as RUNNING with its opening messages before its first model step, so a
                # process that dies during that step (a read has no pre-registration) reopens this
                # node at the next turn (decision 7) instead of starting a new task
                self.save()
            outcome = await run_node(self, node)
            if outcome == "SUSPENDED":
                task.state = "SUSPENDED"
                return Reply(question_of(self, node), True, node.suspended, task.id)  # the turn saves
            self.save()
            if node.kind == "delegate" and node.state in FINAL and node.parent:
                parent = task.nodes[node.parent]
                text = node.output_text if node.state == "DONE" else node.reason
                parent.messages.append({"role": "user", "content": f"[delegate {node.id} {node.skill}] ended "
                                        f"{node.state}: {text}"})
        return self._finish_task()

    def _start(self, node: NodeState) -> bool:
        """Start a PENDING node: fail it when a dependency failed, skip a satisfied provider."""
        task = self.task
        for d in node.deps:
            dep = task.nodes[d]
            if dep.kind != "delegate" and dep.state in ("FAILED", "CANCELLED"):
                finish_node(self, node, "FAILED", reason=f"dependency {d} ended {dep.state}")
                return False
        module = self.skill_module(node.skill)
        if node.kind == "provider":
            shared = [o for o in module.OUTPUTS.values() if o.share]
            pools = {"TASK": task.shared, "SESSION": self.session.values}
            if shared and all(rt.has_value(pools[o.share].get(o.name, rt.MISSING)) for o in shared):
                node.state = "SKIPPED"
                self.emit("node.skipped", node=node.id, skill=node.skill, reason="all its shared outputs exist")
                return False
        node.input_sources = module.bind_inputs(node.inputs, NodeContext(self, node)) or {}
        self.emit("node.started", node=node.id, skill=node.skill, target=node.target, kind=node.kind)
        node.state = "RUNNING"
        node.messages = step_messages(self, node)
        return True

    def _finish_task(self) -> Reply:
        task = self.task
        failed = [task.nodes[n] for n in task.order
                  if task.nodes[n].kind != "delegate" and task.nodes[n].state in ("FAILED", "CANCELLED")]
        if failed:
            task.state, task.reason = "FAILED", failed[0].reason
            self.emit("task.finished", state="FAILED", reason=task.reason)
            return Reply("Could not complete: " + "; ".join(f"{n.id}: {n.reason}" for n in failed), False, task=task.id)
        task.state = "DONE"
        self.emit("task.finished", state="DONE")
        needed = {d for n in task.nodes.values() for d in n.deps}
        sinks = [task.nodes[n] for n in task.order if n not in needed and task.nodes[n].state == "DONE"]
        return Reply("\n".join(n.output_text or "" for n in sinks) or "Done.", False, task=task.id)
