"""Evidence (§9, §14.3; docs/interpretations.md: Uncertain writes, Evidence registration):
registering a call, settling it, reopening writes after a restart, and the session's entity index.

A business call that passed the gate is evidence. A write is registered STARTED and saved before
its tool is called; its outcome settles it SUCCESS or FAILED, or leaves it UNKNOWN (uncertain),
and a restart turns a STARTED write into UNKNOWN_PRE_CALL. Uncertain writes are settled before the
node's next model step: by the contract's verify tool, else by asking the user (VERIFY).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from skillc.runtime.words.events import EventName
from skillc.runtime.text import border
from skillc.runtime.call import lifecycle
from skillc.runtime.compiled.skillmeta import Judgement, ToolMeta
from skillc.runtime.compiled.values import MISSING, default_empty
from skillc.runtime.seam.indexes import evidence_index
from skillc.runtime.seam.state import Evidence, NodeState
from skillc.runtime.words.vocab import EvidenceStatus, NodeStatus, Suspension
from skillc.runtime.words.vocab import SideEffect

if TYPE_CHECKING:
    from skillc.runtime.seam.seams import SessionEnv
    from skillc.runtime.words.event_types import SettleVia

UNSETTLED = (EvidenceStatus.UNKNOWN, EvidenceStatus.UNKNOWN_PRE_CALL)


def register(env: SessionEnv, ev: Evidence, *, store: bool = True) -> None:
    """Give `ev` the session's next id, attach it to its node and the task's idempotency index."""
    ev.id = f"e{env.session.next_evidence}"
    ev.seq = env.session.next_evidence
    env.session.next_evidence += 1
    env.evidence[ev.id] = ev
    node = env.task.nodes.get(ev.node) if env.task else None
    if node is not None:
        node.evidence.append(ev.id)
    if ev.idem_key and env.task is not None:
        env.task.idem[ev.idem_key] = ev.id
    if store:
        env.put_evidence(ev)


def reopen(evidence: Iterable[Evidence]) -> list[Evidence]:
    """After a restart: a STARTED write's outcome is unknown (UNKNOWN_PRE_CALL). Returns the
    records changed."""
    changed = []
    for ev in evidence:
        if ev.status == EvidenceStatus.STARTED:
            ev.status = EvidenceStatus.UNKNOWN_PRE_CALL
            changed.append(ev)
    return changed


def index_entities(env: SessionEnv, entities: Iterable[dict[str, Any]]) -> None:
    """Append entities to the session's index (oldest first; PRIOR_TASK reads it newest first)."""
    env.session.entities.extend(entities)


def settle_success(env: SessionEnv, ev: Evidence, meta: ToolMeta | None, response: Any) -> Judgement | None:
    """Judge and extract a response that arrived: the evidence becomes SUCCESS (§6). Returns the
    response contract's verdict (None for a tool without a contract: no business judgement)."""
    ev.status = EvidenceStatus.SUCCESS
    ev.response = response
    judgement = None
    if meta is None:
        ev.business_ok, ev.empty = True, default_empty(response)
    else:
        judgement = meta.judge(response)
        ev.business_ok = judgement.business_ok
        extraction = meta.extract(response, ev.args)
        ev.empty = extraction.empty
        if ev.business_ok:
            # An extract whose path is absent holds no value (MISSING must not reach the store).
            ev.values = {k: v for k, v in extraction.values.items() if v is not MISSING}
            ev.entities = [dict(e, task=ev.task, evidence=ev.id) for e in extraction.entities]
            index_entities(env, ev.entities)
    env.put_evidence(ev)
    return judgement


def settle_write(env: SessionEnv, node: NodeState, ev: Evidence, ok: bool, *, via: SettleVia,
                 response: Any = None) -> None:
    """Settle an uncertain write as SUCCESS or FAILED and emit write.settled."""
    ev.status = EvidenceStatus.SUCCESS if ok else EvidenceStatus.FAILED
    ev.business_ok = True if ok else None
    if response is not None and ok:
        ev.response = response
    env.put_evidence(ev)
    env.emit({"type": EventName.WRITE_SETTLED, "node": node.id, "evidence": ev.id, "tool": ev.tool, "status": ev.status,
              "via": via})
    verdict = "took effect" if ok else "did NOT take effect"
    node.messages.append({"role": "user", "content": f"[runtime] The uncertain write {ev.id} ({ev.tool}) {verdict} "
                          f"(settled via {via})."})


async def settle_open_writes(env: SessionEnv, node: NodeState) -> NodeStatus | None:
    """Verify uncertain writes (§14.3): by the contract's verify tool, else ask the user (VERIFY).
    Returns SUSPENDED when the user must answer."""
    # the node's unsettled writes from the session's index (not a scan of every record it holds)
    for ev in evidence_index(env).open_of(node.task, node.id):
        if ev.status not in UNSETTLED:
            continue
        module = env.skill_module(node.skill)
        meta = module.TOOLS.get(ev.tool)
        verify_tool = meta.verify_tool if meta is not None else None
        verify_meta = module.TOOLS.get(verify_tool) if verify_tool else None
        # §6.4: the verify tool must be a NONE tool of contract.tools and in toolNames; otherwise
        # the write cannot be checked automatically and the user is asked.
        if (meta is not None and verify_tool and verify_meta is not None and verify_meta.side_effect == SideEffect.NONE
                and meta.verify_args is not None and verify_tool in module.SKILL.tool_names and verify_tool in env.catalog):
            outcome = await env.call_tool(node, verify_tool, meta.verify_args(ev.args))
            # an answer the runtime cannot keep settles nothing: the user is asked (VERIFY) instead
            if not outcome.error and border.refusal(outcome.response) is None:
                ok = verify_meta.judge(outcome.response).business_ok
                settle_write(env, node, ev, ok, via="verify", response=outcome.response)
                continue
        node.verify_evidence = ev.id
        lifecycle.ask(node, Suspension.VERIFY)
        return lifecycle.suspend(env, node)
    return None
