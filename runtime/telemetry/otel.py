"""OpenTelemetry spans from the trace, following the GenAI semantic conventions.

One tree per turn (inside the caller's trace when the turn's context carries one):

    invoke_workflow skillc.turn              the turn: gen_ai.workflow.name=skillc.turn, gen_ai.conversation.id
    ├── plan                                 gen_ai.operation.name=plan (route, intent, plan)
    │   └── chat {model}                     gen_ai.operation.name=chat, skillc.purpose (CLIENT)
    └── invoke_workflow {agent}              one task's part in this turn: gen_ai.workflow.name={agent}
        └── invoke_agent {agent}             one node (gen_ai.agent.*, skillc.node.*, skillc.skill)
            ├── chat {model}                 a model step (CLIENT)
            ├── execute_tool {tool}          gen_ai.tool.*, error.type, skillc.* (INTERNAL)
            │   └── tools/call {tool}        the MCP request (CLIENT; see otel_calls.py)
            └── invoke_agent {agent}         a delegate node, under the node that delegated

Attributes hold names, ids, codes, booleans and digests only: no argument value, tool response,
message text or question is ever exported (sensitive or not). skillc's verdicts live under
`skillc.`: the call's outcome and refusal code, evidence id and status, the approval id and
decision a write ran under, the idempotency key's digest, how a write was settled.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry import trace as ot
from opentelemetry.trace import SpanKind, Status, StatusCode

from skillc.runtime.words.event_types import (AgentRouted, AuditApproval, Error, NodeFinished, NodeResumed, NodeStarted,
                                              NodeSuspended, SkillRejected, TaskFinished, TaskPlanned, ToolCall,
                                              TraceEvent, TurnReply, WriteSettled)
from skillc.runtime.words.events import EventName
from skillc.runtime.telemetry.metrics import tool_outcome
from skillc.runtime.telemetry.otel_calls import ChatSpan, ToolSpan, client_span, model_attributes
from skillc.runtime.words.vocab import Decision, NodeStatus, TaskStatus

TURN_WORKFLOW = "skillc.turn"  # gen_ai.workflow.name of a turn's span
_PLANNING = ("route", "intent", "plan")
SCOPE = "skillc"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass
class _Turn:
    """The open spans of one session's running turn."""

    turn: Any
    started: int
    env: Any = None
    task: Any = None
    task_id: str | None = None
    agent: str | None = None
    plan: Any = None
    nodes: dict[str, Any] = field(default_factory=dict)
    tool: Any = None  # the open execute_tool span of an MCP call under way
    tool_name: str | None = None  # its tool: the tool.call that closes it
    closing: Any = None  # (span, end_ns, tool): an execute_tool span that may still get write.settled
    boundary: int = 0  # ns: where the next execute_tool span starts
    approvals: dict[str, tuple[str, str]] = field(default_factory=dict)  # node -> (approval id, decision)


class Spans:
    """Builds spans from trace events (per session) with a tracer."""

    def __init__(self, tracer_provider: Any = None) -> None:
        self.provider = tracer_provider or ot.get_tracer_provider()
        self.tracer = self.provider.get_tracer(SCOPE)
        self._turns: dict[str, _Turn] = {}

    # ------------------------------------------------------------ helpers

    def _start(self, name: str, parent: Any, attributes: dict[str, Any], *, start: int | None = None,
               kind: SpanKind = SpanKind.INTERNAL) -> Any:
        context = ot.set_span_in_context(parent) if parent is not None else None
        return self.tracer.start_span(name, context=context, kind=kind, attributes=attributes, start_time=start)

    def _task(self, st: _Turn, session: str, task_id: str | None, agent: str | None = None) -> Any:
        if task_id is None:
            return st.task or st.turn
        if st.task is not None and st.task_id == task_id:
            return st.task
        if st.task is not None:
            st.task.end()
        task_state = getattr(st.env, "task", None)
        known = getattr(task_state, "agent", None) if getattr(task_state, "id", None) == task_id else None
        st.task_id, st.agent = task_id, agent or st.agent or known or None
        attrs = {"gen_ai.operation.name": "invoke_workflow", "gen_ai.conversation.id": session,
                 "skillc.task.id": task_id}
        if st.agent:  # the agent's task is the workflow: it plans and runs the agent's skills
            attrs["gen_ai.workflow.name"] = st.agent
        # the turn's work is this task's from the turn's start (reload, routing)
        st.task = self._start(f"invoke_workflow {st.agent}" if st.agent else "invoke_workflow", st.turn, attrs,
                              start=st.started)
        return st.task

    def _node(self, st: _Turn, event: Mapping[str, Any], env: Any, start: int | None = None) -> Any:
        nid = event.get("node")
        if nid is None:
            return self._task(st, event["session"], event.get("task"))
        span = st.nodes.get(nid)
        if span is not None:
            return span
        task_state = getattr(env, "task", None)
        node = task_state.nodes.get(nid) if task_state is not None else None
        agent = st.agent or (getattr(task_state, "agent", None) or None)
        parent = st.nodes.get(getattr(node, "parent", None) or "") or self._task(st, event["session"], event.get("task"))
        attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": event["session"],
                 "gen_ai.agent.id": f"{event.get('task')}/{nid}", "skillc.node.id": nid}
        if agent:
            attrs["gen_ai.agent.name"] = agent
        if node is not None:
            attrs.update({"skillc.skill": node.skill, "skillc.node.kind": node.kind})
        span = st.nodes[nid] = self._start(f"invoke_agent {agent}" if agent else "invoke_agent", parent, attrs,
                                           start=start)
        return span

    def _close_tool(self, st: _Turn) -> None:
        if st.closing is not None:
            span, end, _ = st.closing
            span.end(end_time=end)
            st.closing = None

    def _end_turn(self, st: _Turn) -> None:
        self._close_tool(st)
        if st.tool is not None:
            st.tool.end()
        for span in (*reversed(st.nodes.values()), st.plan, st.task):
            if span is not None:
                span.end()
        st.turn.end()

    # ------------------------------------------------------------ events

    def event(self, event: TraceEvent, env: Any) -> None:
        """Advance the session's span tree by one trace event: a `turn.started` opens the turn's
        tree, every other event of a turn goes to its type's handler (`HANDLERS`, if it has one)."""
        session = str(event["session"])
        now = time.time_ns()
        st = self._turns.get(session)
        if event["type"] == EventName.TURN_STARTED:
            if st is not None:
                self._end_turn(st)
            # no explicit parent: the current context's span is the parent (a caller's trace
            # continued from its traceparent, or an application's own span), else a new trace
            span = self.tracer.start_span(f"invoke_workflow {TURN_WORKFLOW}", kind=SpanKind.INTERNAL, attributes={
                "gen_ai.operation.name": "invoke_workflow", "gen_ai.workflow.name": TURN_WORKFLOW,
                "gen_ai.conversation.id": session, "skillc.turn": int(event.get("turn") or 0),
                "skillc.turn.input": "message" if "message" in event else "answer"})
            self._turns[session] = _Turn(span, now, env=env, boundary=now)
            return
        if st is None:
            return  # an event outside a turn (a test writing events by hand)
        if event["type"] not in KEEP_TOOL_OPEN:
            self._close_tool(st)
        handler = HANDLERS.get(event["type"])
        if handler is not None:
            handler(self, st, event, env, now)

    def _on_skill_rejected(self, st: _Turn, event: SkillRejected, env: Any, now: int) -> None:
        st.turn.add_event("skillc.skill_rejected", {"skillc.skill": str(event.get("skill"))})

    def _on_agent_routed(self, st: _Turn, event: AgentRouted, env: Any, now: int) -> None:
        st.agent = str(event.get("agent"))
        task = self._task(st, event["session"], event.get("task"), st.agent)
        task.update_name(f"invoke_workflow {st.agent}")
        task.set_attribute("gen_ai.workflow.name", st.agent)
        task.set_attribute("skillc.route.via", str(event.get("via")))
        self._plan(st, event)

    def _plan(self, st: _Turn, event: Mapping[str, Any]) -> Any:
        if st.plan is None:
            parent = self._task(st, event["session"], event.get("task"))
            st.plan = self._start("plan", parent, {"gen_ai.operation.name": "plan",
                                                   "gen_ai.conversation.id": event["session"]}, start=st.started)
        return st.plan

    def _on_task_planned(self, st: _Turn, event: TaskPlanned, env: Any, now: int) -> None:
        plan = self._plan(st, event)
        plan.set_attribute("skillc.plan.via", str(event.get("via")))
        plan.set_attribute("skillc.plan.nodes", [str(n.get("node")) for n in event.get("nodes") or []])
        plan.end()
        st.plan = None
        st.boundary = now

    def _on_task_finished(self, st: _Turn, event: TaskFinished, env: Any, now: int) -> None:
        state = str(event.get("state"))
        if st.plan is not None:  # planning failed (docs/interpretations.md: Planning failure)
            st.plan.set_attribute("error.type", str(event.get("reason")))
            st.plan.set_status(Status(StatusCode.ERROR))
            st.plan.end()
            st.plan = None
        task = self._task(st, event["session"], event.get("task"))
        task.set_attribute("skillc.task.state", state)
        if state != TaskStatus.DONE:
            task.set_attribute("error.type", state if state == TaskStatus.CANCELLED else "task_failed")
            task.set_status(Status(StatusCode.ERROR))
        if task is st.task:
            for span in reversed(st.nodes.values()):
                span.end()
            st.nodes.clear()
            task.end()
            st.task = None

    def _on_node_started(self, st: _Turn, event: NodeStarted | NodeResumed, env: Any, now: int) -> None:
        self._node(st, event, env, start=now)
        st.boundary = now


    def _on_node_finished(self, st: _Turn, event: NodeFinished, env: Any, now: int) -> None:
        span = self._node(st, event, env)
        state = str(event.get("state"))
        span.set_attribute("skillc.node.state", state)
        if state == NodeStatus.FAILED:
            span.set_attribute("error.type", "node_failed")
            span.set_status(Status(StatusCode.ERROR))
        span.end()
        st.nodes.pop(str(event.get("node")), None)

    def _on_node_suspended(self, st: _Turn, event: NodeSuspended, env: Any, now: int) -> None:
        # left open: its audit.approval follows, and the turn's end closes it
        self._node(st, event, env).set_attribute("skillc.node.suspended", str(event.get("kind")))

    def _on_audit_approval(self, st: _Turn, event: AuditApproval, env: Any, now: int) -> None:
        span = self._node(st, event, env)
        approval, decision = str(event.get("approval")), str(event.get("decision"))
        span.set_attribute("skillc.approval.id", approval)
        span.set_attribute("skillc.approval.decision", decision)
        span.add_event("skillc.approval", {"skillc.approval.id": approval, "skillc.approval.decision": decision})
        st.approvals[str(event.get("node"))] = (approval, decision)

    def _on_tool_call(self, st: _Turn, event: ToolCall, env: Any, now: int) -> None:
        tool = str(event.get("tool"))
        builtin = bool(event.get("builtin"))
        span = st.tool if st.tool is not None and st.tool_name == tool else None
        if span is None:
            if st.tool is not None:  # an MCP call whose tool.call never came (a verify call)
                st.tool.end()
            span = self._start(f"execute_tool {tool}", self._node(st, event, env), _tool_attrs(event, tool, builtin),
                               start=st.boundary)
        st.tool = None
        outcome = tool_outcome(event)
        span.set_attribute("skillc.call.outcome", outcome)
        call_id = _call_id(env, event.get("node"), tool)
        if call_id:
            span.set_attribute("gen_ai.tool.call.id", call_id)
        if not event.get("ok"):
            span.set_attribute("error.type", str(event.get("error")))
            span.set_status(Status(StatusCode.ERROR))
        if event.get("error"):
            span.set_attribute("skillc.error.code", str(event.get("code")))
            if outcome == "refused":
                span.set_attribute("skillc.refusal.code", str(event.get("error")))
        for attribute, value in (("skillc.evidence.id", event.get("evidence")), ("skillc.evidence.status", event.get("status"))):
            if value is not None:
                span.set_attribute(attribute, str(value))
        for key, flag in (("business_ok", event.get("business_ok")), ("replayed", event.get("replayed")),
                          ("empty", event.get("empty"))):
            if isinstance(flag, bool):
                span.set_attribute(f"skillc.{key}", flag)
        evidence = getattr(env, "evidence", {}).get(event.get("evidence")) if env is not None else None
        if evidence is not None and getattr(evidence, "idem_key", None):
            span.set_attribute("skillc.idempotency_key.digest", _digest(evidence.idem_key))
        approval = st.approvals.get(str(event.get("node")))
        if approval is not None and not builtin and approval[1] == Decision.CONFIRM:
            span.set_attribute("skillc.approval.id", approval[0])
            span.set_attribute("skillc.approval.decision", approval[1])
            del st.approvals[str(event.get("node"))]
        for arg, source in (event.get("provenance") or {}).items():
            span.set_attribute(f"skillc.provenance.{arg}", str(source))
        st.closing = (span, now, tool)
        st.boundary = now

    def _on_write_settled(self, st: _Turn, event: WriteSettled, env: Any, now: int) -> None:
        attrs = {"skillc.settlement.status": str(event.get("status")), "skillc.settlement.via": str(event.get("via")),
                 "skillc.settlement.evidence": str(event.get("evidence"))}
        if st.closing is not None and st.closing[2] == event.get("tool"):
            st.closing[0].set_attributes(attrs)  # settled by the call's own answer
        elif st.tool is not None:  # settled by its verify call
            st.tool.set_attributes({**attrs, "skillc.verify": True})
            st.tool.end()
            st.tool = None
        else:  # settled by the user's answer
            self._node(st, event, env).add_event("skillc.write_settled", attrs)
        st.boundary = now

    def _on_error(self, st: _Turn, event: Error, env: Any, now: int) -> None:
        st.turn.set_attribute("error.type", "skillc.error")
        st.turn.set_status(Status(StatusCode.ERROR))

    def _on_turn_reply(self, st: _Turn, event: TurnReply, env: Any, now: int) -> None:
        st.turn.set_attribute("skillc.turn.suspended", bool(event.get("suspended")))
        if st.task is not None:
            st.task.set_attribute("skillc.task.state", str(TaskStatus.SUSPENDED if event.get("suspended") else TaskStatus.RUNNING))
        self._end_turn(st)
        del self._turns[str(event["session"])]

    # ------------------------------------------------------------ model and tool calls

    def model_started(self, env: Any, model: Any, request: Any) -> ChatSpan | None:
        """A `chat {model}` span under the planning span or the running node."""
        st = self._turns.get(env.session.id) if env is not None else None
        if st is None:
            return None
        purpose = str(getattr(request, "purpose", ""))
        task = getattr(env, "task", None)
        fake = {"session": env.session.id, "task": getattr(task, "id", None)}
        if purpose in _PLANNING:
            parent = self._plan(st, fake)
        else:
            node = next((n for n in reversed(st.nodes)), None)
            parent = st.nodes[node] if node else self._task(st, env.session.id, fake["task"])
        attrs = model_attributes(model, request)
        attrs.update({"gen_ai.conversation.id": env.session.id, "skillc.purpose": purpose})
        span = self._start(f"chat {attrs['gen_ai.request.model']}", parent, attrs, kind=SpanKind.CLIENT)
        return ChatSpan(span, st)

    def tool_started(self, env: Any, tool: str, server: str | None) -> ToolSpan:
        """The execute_tool span of an MCP call (INTERNAL), open from the end of the model step
        until its tool.call event, and the CLIENT span of its request, whose context the
        request's `_meta` carries."""
        st = self._turns.get(env.session.id) if env is not None else None
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool, "gen_ai.tool.type": "extension",
                 "mcp.method.name": "tools/call"}
        if server:
            attrs["skillc.mcp.server"] = server
        if st is None:
            span = self._start(f"execute_tool {tool}", None, attrs)
            return ToolSpan(None, span, client_span(self.tracer, self.provider, span, tool, server), tool)
        self._close_tool(st)
        if st.tool is not None:
            st.tool.end()
        node = next((n for n in reversed(st.nodes)), None)
        parent = st.nodes[node] if node else self._task(st, env.session.id, getattr(env.task, "id", None))
        attrs["gen_ai.conversation.id"] = env.session.id
        span = self._start(f"execute_tool {tool}", parent, attrs, start=st.boundary)
        st.tool, st.tool_name = span, tool
        return ToolSpan(st, span, client_span(self.tracer, self.provider, span, tool, server), tool)


# keyed by EventName, looked up by a plain string too (turn.started opens the tree in `event`); a
# test keeps every type in HANDLERS or NOT_SPANNED
HANDLERS: dict[str, Callable[[Spans, _Turn, Any, Any, int], None]] = {
    EventName.SKILL_REJECTED: Spans._on_skill_rejected,
    EventName.AGENT_ROUTED: Spans._on_agent_routed,
    EventName.TASK_PLANNED: Spans._on_task_planned,
    EventName.NODE_STARTED: Spans._on_node_started,
    EventName.NODE_RESUMED: Spans._on_node_started,
    EventName.NODE_SUSPENDED: Spans._on_node_suspended,
    EventName.AUDIT_APPROVAL: Spans._on_audit_approval,
    EventName.TOOL_CALL: Spans._on_tool_call,
    EventName.WRITE_SETTLED: Spans._on_write_settled,
    EventName.NODE_FINISHED: Spans._on_node_finished,
    EventName.TASK_FINISHED: Spans._on_task_finished,
    EventName.ERROR: Spans._on_error,
    EventName.TURN_REPLY: Spans._on_turn_reply,
}
"""The event types that shape a turn's spans, each by its handler."""

NOT_SPANNED: frozenset[EventName] = frozenset({
    EventName.TURN_STARTED,  # opens the turn's tree, in `Spans.event`
    EventName.STUDIO_STALE, EventName.TURN_REPLAYED, EventName.NODE_SKIPPED, EventName.OUTPUT_SET,
    EventName.MCP_INVOKED,  # its execute_tool span is the call hook's (`tool_started`)
    EventName.AUDIT_SETTLEMENT,  # write.settled already set the settlement's attributes
})
"""The event types with no handler of their own."""

KEEP_TOOL_OPEN: frozenset[EventName] = frozenset({EventName.WRITE_SETTLED, EventName.AUDIT_SETTLEMENT,
                                                  EventName.MCP_INVOKED})
"""The events that may still belong to the execute_tool span just closed (its settlement, the
next call's invocation); any other event ends it first."""


def _tool_attrs(event: ToolCall, tool: str, builtin: bool) -> dict[str, Any]:
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
            "gen_ai.tool.type": "function" if builtin else "extension",
            "gen_ai.conversation.id": str(event["session"]), "skillc.tool.builtin": builtin}


def _call_id(env: Any, node_id: Any, tool: str) -> str | None:
    """The model's id for the call being recorded: the first unanswered call of the node's last
    assistant message (tool.call is emitted just before its answer is appended)."""
    task = getattr(env, "task", None)
    node = task.nodes.get(node_id) if task is not None and node_id else None
    messages = getattr(node, "messages", None) or []
    answered = 0
    for msg in reversed(messages):
        if msg.get("role") == "tool":
            answered += 1
            continue
        calls = msg.get("tool_calls") if msg.get("role") == "assistant" else None
        if calls and answered < len(calls) and calls[answered].get("function", {}).get("name") == tool:
            return str(calls[answered].get("id"))
        return None
    return None
