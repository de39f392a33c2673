"""A node's state transitions, in one place: every write of `NodeState.state` and
`NodeState.suspended` goes through a function here, and each emits its trace event.

PENDING -> RUNNING (started) -> SUSPENDED (FOLLOW_UP / APPROVAL / VERIFY) | WAITING (delegate)
-> RUNNING again -> DONE | FAILED | CANCELLED; a satisfied provider goes PENDING -> SKIPPED.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from skillc.runtime.words.events import EventName
from skillc.runtime.words.event_types import NodeSuspended
from skillc.runtime.call.gate import approval_summary
from skillc.runtime.seam.state import Evidence, NodeState
from skillc.runtime.words.vocab import FINAL_NODE, NodeStatus, Suspension

if TYPE_CHECKING:
    from skillc.runtime.seam.seams import SessionEnv

# Node states (and outcomes of node.run_node), by their short names.
DONE, FAILED, SUSPENDED, WAITING = NodeStatus.DONE, NodeStatus.FAILED, NodeStatus.SUSPENDED, NodeStatus.WAITING
CANCELLED, RUNNING, SKIPPED, PENDING = NodeStatus.CANCELLED, NodeStatus.RUNNING, NodeStatus.SKIPPED, NodeStatus.PENDING
FINAL = FINAL_NODE


def start(env: SessionEnv, node: NodeState, messages: list[dict[str, Any]]) -> None:
    """PENDING -> RUNNING with the node's opening messages; emits node.started."""
    env.emit({"type": EventName.NODE_STARTED, "node": node.id, "skill": node.skill, "target": node.target,
              "kind": node.kind})
    node.state = RUNNING
    node.messages = messages


def skip(env: SessionEnv, node: NodeState, reason: str) -> None:
    """PENDING -> SKIPPED (a provider whose shared outputs exist); emits node.skipped."""
    node.state = SKIPPED
    env.emit({"type": EventName.NODE_SKIPPED, "node": node.id, "skill": node.skill, "reason": reason})


def run(node: NodeState) -> None:
    """(Re)enter RUNNING: a node's loop starts or continues, no question open."""
    node.state = RUNNING
    node.suspended = None


def ask(node: NodeState, kind: Suspension) -> None:
    """Name the question a node is about to suspend on (FOLLOW_UP, APPROVAL, VERIFY)."""
    node.suspended = kind


def wait(node: NodeState) -> NodeStatus:
    """RUNNING -> WAITING for a delegate."""
    node.state = WAITING
    return WAITING


def suspend(env: SessionEnv, node: NodeState) -> NodeStatus:
    """-> SUSPENDED on the question named by `ask`; emits node.suspended with the question."""
    node.state = SUSPENDED
    kind = node.suspended
    event: NodeSuspended = {"type": EventName.NODE_SUSPENDED, "node": node.id, "kind": kind}
    if kind == Suspension.FOLLOW_UP and node.follow_up:
        event["question"], event["expected_fields"] = node.follow_up.question, node.follow_up.expected_fields
    elif kind == Suspension.APPROVAL and node.pending:
        event["question"], event["tool"] = node.pending.question, node.pending.tool
    elif kind == Suspension.VERIFY:
        ev = env.evidence.get(node.verify_evidence or "")
        event["question"], event["tool"] = verify_question(env, node, ev), ev.tool if ev else None
    env.emit(event)
    return SUSPENDED


def finish_node(env: SessionEnv, node: NodeState, state: NodeStatus, *, output: str | None = None,
                reason: str | None = None) -> NodeStatus:
    """End a node: DONE shares outputs and entities (§8); emit node.finished."""
    node.state = state
    node.suspended = None
    if state == DONE:
        env.share_outputs(node)
        env.emit({"type": EventName.NODE_FINISHED, "node": node.id, "state": state, "output": output})
    else:
        node.reason = reason or node.reason
        env.emit({"type": EventName.NODE_FINISHED, "node": node.id, "state": state, "reason": node.reason})
    return state


def verify_question(env: SessionEnv, node: NodeState, ev: Evidence | None) -> str:
    """The VERIFY question put to the user: the write's parameter summary as in an approval
    (labels, sensitive values masked, platform arguments hidden, §5.2, §11)."""
    if ev is None:
        return "Did the last write take effect?"
    meta = env.skill_module(node.skill).TOOLS.get(ev.tool)
    summary = approval_summary(meta, ev.args) if meta is not None else \
        json.dumps(ev.args, ensure_ascii=False, default=str)
    return (f"The outcome of {ev.tool} is unknown (the call {ev.error or 'was interrupted'}). "
            f"Did it take effect?\n{summary}")


def question_of(env: SessionEnv, node: NodeState) -> str:
    """The pending question of a suspended node."""
    if node.suspended == Suspension.FOLLOW_UP and node.follow_up:
        return node.follow_up.question
    if node.suspended == Suspension.APPROVAL and node.pending:
        return node.pending.question
    if node.suspended == Suspension.VERIFY:
        return verify_question(env, node, env.evidence.get(node.verify_evidence or ""))
    return ""
