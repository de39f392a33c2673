"""The runtime's state: sessions, tasks, nodes, evidence and entities, as plain dataclasses.

Every record round-trips through `to_doc`/`from_doc` (JSON documents in the store), so a session
resumes in a new process exactly where it stopped.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from skillc.runtime.words.vocab import EvidenceStatus, NodeKind, NodeStatus, SideEffect, Suspension, TaskStatus

T = TypeVar("T")

# Evidence statuses (§10.2, §14): a write is STARTED before the call; after a restart a STARTED
# write is UNKNOWN_PRE_CALL; a call failure of a write is UNKNOWN (uncertain) or FAILED. The
# open ones are vocab.OPEN_STATUSES.
#
# The status fields hold vocab words (StrEnums: stored and traced as their plain strings); a
# record built from a stored document turns its strings back into words in __post_init__.


@dataclass
class Evidence:
    """One business call that passed the gate (docs/interpretations.md: Evidence registration)."""

    id: str
    task: str
    node: str
    tool: str
    args: dict[str, Any]
    side_effect: SideEffect = SideEffect.NONE
    status: EvidenceStatus = EvidenceStatus.STARTED
    business_ok: bool | None = None
    empty: bool | None = None
    response: Any = None
    error: str | None = None
    values: dict[str, Any] = field(default_factory=dict)  # extract key -> subtree
    entities: list[dict[str, Any]] = field(default_factory=list)
    idem_key: str | None = None
    turn: int = 0
    seq: int = 0  # creation order within the session

    def __post_init__(self) -> None:
        self.side_effect, self.status = SideEffect(self.side_effect), EvidenceStatus(self.status)

    @property
    def completed(self) -> bool:
        """"Completed" (§10.2): SUCCESS and not judged a business failure (empty counts)."""
        return self.status == EvidenceStatus.SUCCESS and self.business_ok is not False


@dataclass
class PendingApproval:
    """A write stopped by the gate, waiting for builtin_node_approval and then the user (§14.1)."""

    tool: str
    args: dict[str, Any]
    summary: str
    asked: bool = False
    question: str = ""
    asked_at: float = 0.0


@dataclass
class FollowUp:
    """An open or just-answered follow-up question (§12)."""

    question: str
    expected_fields: list[str] = field(default_factory=list)
    answer: str | None = None
    answered_turn: int = 0


@dataclass
class NodeState:
    """One node of a task graph: a skill working toward one goal."""

    id: str
    task: str
    skill: str
    kind: NodeKind = NodeKind.MAIN
    deps: list[str] = field(default_factory=list)
    target: str | None = None
    state: NodeStatus = NodeStatus.PENDING  # its transitions: lifecycle.py
    depth: int = 0
    parent: str | None = None  # the delegator, for delegate nodes
    objective: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    input_sources: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> {value, source, ref}
    scratch: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    steps: int = 0
    no_progress: int = 0
    fp_sig: str | None = None
    fp_count: int = 0
    evidence: list[str] = field(default_factory=list)
    # evidence of other nodes this node replayed (docs/interpretations.md: A replayed target
    # completes the node)
    replayed: list[str] = field(default_factory=list)
    last_business: str | None = None  # evidence id of the most recent business call
    pending: PendingApproval | None = None
    suspended: Suspension | None = None
    verify_evidence: str | None = None
    follow_up: FollowUp | None = None
    answered: FollowUp | None = None
    delegations: list[dict[str, Any]] = field(default_factory=list)
    output_text: str | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        self.kind, self.state = NodeKind(self.kind), NodeStatus(self.state)
        if self.suspended is not None:
            self.suspended = Suspension(self.suspended)


@dataclass
class TaskState:
    """One user goal: a task graph of nodes run in dependency order."""

    id: str
    session: str
    agent: str
    message: str
    state: TaskStatus = TaskStatus.RUNNING
    order: list[str] = field(default_factory=list)
    nodes: dict[str, NodeState] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict)
    idem: dict[str, str] = field(default_factory=dict)  # tool+key -> evidence id
    counters: dict[str, int] = field(default_factory=dict)
    reason: str | None = None
    turn: int = 0
    evidence_from: int = 0  # the session's next evidence number when the task began (0: unknown)

    def __post_init__(self) -> None:
        self.state = TaskStatus(self.state)


@dataclass
class SessionState:
    """A conversation: identity, values, entity index, the user's messages, counters."""

    id: str
    platform: dict[str, Any]
    turn: int = 0
    next_task: int = 1
    next_evidence: int = 1
    values: dict[str, Any] = field(default_factory=dict)  # session.*
    entities: list[dict[str, Any]] = field(default_factory=list)  # oldest first
    user_messages: list[dict[str, Any]] = field(default_factory=list)  # {turn, text}
    tasks: list[str] = field(default_factory=list)
    active_task: str | None = None
    version: int = 0  # the store's version of this session (0: never stored); see runtime/store


_NESTED = ("pending", "follow_up", "answered")  # NodeState's nested records
# Fields earlier versions kept on a node and nothing read: dropped when a stored node is loaded, so
# a session stored before they went still opens.
RETIRED_NODE_FIELDS = ("approved", "target_claimed")


def without_retired(doc: Any) -> Any:
    """A stored node document without RETIRED_NODE_FIELDS (the same object when it has none)."""
    if isinstance(doc, dict) and any(key in doc for key in RETIRED_NODE_FIELDS):
        doc = {k: v for k, v in doc.items() if k not in RETIRED_NODE_FIELDS}
    return doc


def to_doc(obj: Any) -> dict[str, Any]:
    """A JSON-ready view of a state record, shallow: it is serialised at once, so nothing is
    copied (dataclasses.asdict deep-copies every message and was the runtime's hottest spot)."""
    doc = dict(obj.__dict__)
    if isinstance(obj, NodeState):
        for key in _NESTED:
            if doc[key] is not None:
                doc[key] = dict(doc[key].__dict__)
    elif isinstance(obj, TaskState):
        doc["nodes"] = {k: to_doc(v) for k, v in obj.nodes.items()}
    return doc


def node_from_doc(doc: dict[str, Any]) -> NodeState:
    """Rebuild a NodeState (nested records included)."""
    doc = dict(without_retired(doc))
    if doc.get("pending"):
        doc["pending"] = PendingApproval(**doc["pending"])
    for key in ("follow_up", "answered"):
        if doc.get(key):
            doc[key] = FollowUp(**doc[key])
    return NodeState(**doc)


def task_from_doc(doc: dict[str, Any]) -> TaskState:
    """Rebuild a TaskState with its nodes."""
    doc = dict(doc)
    doc["nodes"] = {k: node_from_doc(v) for k, v in doc.get("nodes", {}).items()}
    return TaskState(**doc)
