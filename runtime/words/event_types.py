"""The trace's events as typed dicts: one `TypedDict` per `EventName`, `TraceEvent` their union,
discriminated on `type` (docs/reference/scenarios.md lists the same fields; a test keeps the two
the same, and another validates every event the scenarios write against the union).

An event is a plain dict at run time (no model object is built per event, and a trace line is
the same bytes it always was); the types are for mypy: a producer builds its event as one of
these (`env.emit({"type": EventName.TOOL_CALL, "node": …, …})`, every field checked against the
member its `type` names), a consumer takes `TraceEvent` or the member its handler table gives it.

- **Stamps** (`seq`, `session`, `turn`, and `task`, `prev`, `hash` where they apply) are added by
  `SessionEnv.emit` / `TraceWriter.emit`, never by the producer: `_Stamped` declares them not
  required, and every event written carries `seq`, `session` and `turn` (the test checks it).
- **node**: the events of one node require it (`_OfNode`); `mcp.invoked` and the audit events
  carry it when a node is under way (`_MaybeNode`). A `None` is never written: the key is left out.
- **Read back** from a file (a JSON line), an event's `type` is a plain string, equal to its
  `EventName`: `as_event` hands a consumer the line as the event it was written as, or None.
- Fields the spec leaves open (a tool's `args`, an output's `value`, a business `code`) are `Any`:
  whatever JSON the tool or the model gave.
"""
# no `from __future__ import annotations`: `__required_keys__` reads NotRequired only from live annotations
from typing import Any, Literal, Union, cast

# typing_extensions: pydantic reads a TypedDict's fields only from its class on Python < 3.12
from typing_extensions import NotRequired, TypedDict

from skillc.runtime.words.events import EVENT_NAMES, EventName
from skillc.runtime.words.vocab import EvidenceStatus, NodeKind, NodeStatus, Source, Suspension, TaskStatus


RouteVia = Literal["only", "model", "user"]
"""How a task's agent was chosen (`agent.routed`): the only loadable one, the model's pick, the user's."""
PlanVia = Literal["shortcut", "model", "fallback"]
"""How a task's nodes were planned (`task.planned`)."""
SettleVia = Literal["call", "verify", "user"]
"""What settled a write (`write.settled`, `audit.settlement`): its own call, a verifying read, the user."""


class _Stamped(TypedDict, total=False):
    """What the writer stamps on every event (`seq`, `session`, `turn`) or where it applies."""

    seq: int  # 1, 2, … over the whole run
    session: str
    turn: int  # 1-based
    task: str  # the turn's task, when it has one
    prev: str  # the digest of the session's previous event (the hash chain, telemetry/audit.py)
    hash: str  # this event's digest


class _OfNode(TypedDict):
    node: str


class _MaybeNode(TypedDict, total=False):
    node: str


class Diagnostic(TypedDict):
    """One reason a skill was dropped at load (`skill.rejected`)."""

    code: str
    message: str


class PlannedNode(TypedDict):
    """One node of a `task.planned` plan."""

    node: str
    skill: str
    target: str | None
    deps: list[str]
    kind: NodeKind


class AuditWhat(TypedDict):
    """What an audit event is about: the tool and digests of its (masked) arguments."""

    tool: str
    args_digest: str
    idempotency_key_digest: NotRequired[str]


class Settlement(TypedDict):
    """A write's settlement as the call that settled it reports it (`CallResult.settled`, written as
    the `write.settled` that follows its `tool.call`)."""

    evidence: str
    tool: str
    status: EvidenceStatus
    via: SettleVia


class StudioStale(_Stamped):
    """The service found its studio source unreachable as a turn starts (the turn's number, no task)."""

    type: Literal[EventName.STUDIO_STALE]
    source: str | None
    error: str
    since: float | None


class TurnStarted(_Stamped):
    """A turn begins with the user's `message` or a structured `answer` (one of the two)."""

    type: Literal[EventName.TURN_STARTED]
    message: NotRequired[str]
    answer: NotRequired[dict[str, Any] | None]


class TurnReplayed(_Stamped):
    """A re-sent message (same client message id) answered with turn `of_turn`'s reply."""

    type: Literal[EventName.TURN_REPLAYED]
    of_turn: int


class SkillRejected(_Stamped):
    """A skill dropped at load (§16)."""

    type: Literal[EventName.SKILL_REJECTED]
    skill: str
    diagnostics: list[Diagnostic]


class AgentRouted(_Stamped):
    """The task's agent: the only one, the model's pick, or the user's."""

    type: Literal[EventName.AGENT_ROUTED]
    agent: str
    via: RouteVia


class TaskPlanned(_Stamped):
    """The task's nodes, from the shortcut, the model's plan, or the fallback."""

    type: Literal[EventName.TASK_PLANNED]
    via: PlanVia
    nodes: list[PlannedNode]


class NodeStarted(_Stamped, _OfNode):
    """A node starts running."""

    type: Literal[EventName.NODE_STARTED]
    skill: str
    target: str | None
    kind: NodeKind


class NodeSkipped(_Stamped, _OfNode):
    """A provider node skipped (its shared outputs exist)."""

    type: Literal[EventName.NODE_SKIPPED]
    skill: str
    reason: str


class ToolCall(_Stamped, _OfNode):
    """One tool call (business or builtin) and what it came to."""

    type: Literal[EventName.TOOL_CALL]
    tool: str
    builtin: bool
    args: Any  # after binding, sensitive values as "***"
    ok: bool
    error: str | None  # the spec's error name
    code: Any  # e.g. "agent_runtime.40024", a business code as the tool gave it, or None
    evidence: str | None
    status: EvidenceStatus | None
    business_ok: bool | None
    empty: bool | None
    replayed: bool
    message: str  # the observation text the model was given
    next: str | None
    provenance: NotRequired[dict[str, str | list[str]]]  # argument -> the source(s) it was accepted from (§5.3)


class McpInvoked(_Stamped, _MaybeNode):
    """A tool really invoked (by the runner's canned server or the runtime's MCP client)."""

    type: Literal[EventName.MCP_INVOKED]
    tool: str
    args: Any


class OutputSet(_Stamped, _OfNode):
    """A node's output set (§8)."""

    type: Literal[EventName.OUTPUT_SET]
    key: str
    value: Any
    source: Source


class NodeSuspended(_Stamped, _OfNode):
    """A node waits on the user: a FOLLOW_UP, an APPROVAL or a VERIFY question."""

    type: Literal[EventName.NODE_SUSPENDED]
    kind: Suspension | None
    question: NotRequired[str]
    expected_fields: NotRequired[list[str]]  # FOLLOW_UP
    tool: NotRequired[str | None]  # APPROVAL, VERIFY


class NodeResumed(_Stamped, _OfNode):
    """A suspended node got its answer (the message of a FOLLOW_UP, the object of the others)."""

    type: Literal[EventName.NODE_RESUMED]
    kind: Suspension | None
    answer: str | dict[str, Any]


class WriteSettled(_Stamped, _OfNode, Settlement):
    """A write's outcome known: by its own call, a verifying read, or the user."""

    type: Literal[EventName.WRITE_SETTLED]


class AuditApproval(_Stamped, _MaybeNode):
    """An approval asked (`REQUESTED`) or decided, who and what (docs/observability.md)."""

    type: Literal[EventName.AUDIT_APPROVAL]
    approval: str
    decision: str
    who: dict[str, Any]
    what: AuditWhat
    at: str  # ISO 8601, UTC


class AuditSettlement(_Stamped, _MaybeNode):
    """A write settled, who and what (docs/observability.md)."""

    type: Literal[EventName.AUDIT_SETTLEMENT]
    evidence: str
    status: EvidenceStatus
    via: SettleVia
    who: dict[str, Any]
    what: AuditWhat
    at: str


class NodeFinished(_Stamped, _OfNode):
    """A node ended: DONE with its `output`, else with its `reason`."""

    type: Literal[EventName.NODE_FINISHED]
    state: NodeStatus
    output: NotRequired[str | None]
    reason: NotRequired[str | None]


class TaskFinished(_Stamped):
    """The task ended; `reason` (and for a planning failure `message`) when not DONE."""

    type: Literal[EventName.TASK_FINISHED]
    state: TaskStatus
    reason: NotRequired[str | None]
    message: NotRequired[str]


class TurnReply(_Stamped):
    """The turn's reply."""

    type: Literal[EventName.TURN_REPLY]
    text: str
    suspended: bool


class Error(_Stamped):
    """A runtime or script failure; `code` MODEL_ERROR when the model could not answer."""

    type: Literal[EventName.ERROR]
    message: str
    code: NotRequired[str]


TraceEvent = Union[StudioStale, TurnStarted, TurnReplayed, SkillRejected, AgentRouted, TaskPlanned, NodeStarted,
                   NodeSkipped, ToolCall, McpInvoked, OutputSet, NodeSuspended, NodeResumed, WriteSettled,
                   AuditApproval, AuditSettlement, NodeFinished, TaskFinished, TurnReply, Error]
"""Any trace event, told apart by its `type`."""

EVENT_TYPES: dict[EventName, type[Any]] = {
    EventName.STUDIO_STALE: StudioStale,
    EventName.TURN_STARTED: TurnStarted,
    EventName.TURN_REPLAYED: TurnReplayed,
    EventName.SKILL_REJECTED: SkillRejected,
    EventName.AGENT_ROUTED: AgentRouted,
    EventName.TASK_PLANNED: TaskPlanned,
    EventName.NODE_STARTED: NodeStarted,
    EventName.NODE_SKIPPED: NodeSkipped,
    EventName.TOOL_CALL: ToolCall,
    EventName.MCP_INVOKED: McpInvoked,
    EventName.OUTPUT_SET: OutputSet,
    EventName.NODE_SUSPENDED: NodeSuspended,
    EventName.NODE_RESUMED: NodeResumed,
    EventName.WRITE_SETTLED: WriteSettled,
    EventName.AUDIT_APPROVAL: AuditApproval,
    EventName.AUDIT_SETTLEMENT: AuditSettlement,
    EventName.NODE_FINISHED: NodeFinished,
    EventName.TASK_FINISHED: TaskFinished,
    EventName.TURN_REPLY: TurnReply,
    EventName.ERROR: Error,
}
"""Each event type's TypedDict (its fields: `__required_keys__`, `__optional_keys__`), for the
reference's table and the tests."""

STAMPS: frozenset[str] = frozenset(_Stamped.__optional_keys__)
"""The keys the writer stamps (the reference's "common" fields, with `node`)."""


def as_event(value: object) -> TraceEvent | None:
    """A value read back from a trace file (a JSON line) as the event it was written as: a JSON
    object whose `type` is one of `EventName`'s, else None (a line of another kind, or a type this
    version does not know). Only the `type` is checked, so a reader of a file someone may have
    edited (replay, audit verify) still checks each field it reads (`.get`, `isinstance`)."""
    if isinstance(value, dict):
        kind = value.get("type")
        if isinstance(kind, str) and kind in EVENT_NAMES:  # a list or an object is no type (nor hashable)
            return cast(TraceEvent, value)
    return None
