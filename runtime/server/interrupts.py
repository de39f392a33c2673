"""A session's pending question as an AG-UI interrupt, and a `resume` entry as the runtime's answer.

An approval is bound to what was approved: its interrupt carries a keyed digest of the exact bound
arguments, and a resume whose digest no longer matches is refused before anything runs
(docs/API.md §2-3). The approver and the time travel with the decision into the trace.
"""
from __future__ import annotations

import hashlib
import hmac
import json
from datetime import datetime, timezone
from typing import Any

from ag_ui.core import Interrupt, ResumeEntry

from skillc.runtime.call.gate import approval_tables
from skillc.runtime.server.auth import Identity
from skillc.runtime.server.errors import ApiError
from skillc.runtime.words.vocab import DECISIONS, Decision, Suspension

_SCHEMAS: dict[str, dict[str, Any]] = {
    Suspension.APPROVAL: {"type": "object", "required": ["decision", "digest"],
                 "properties": {"decision": {"enum": [str(d) for d in Decision]}, "digest": {"type": "string"}}},
    Suspension.VERIFY: {"type": "object", "required": ["verified"], "properties": {"verified": {"type": "boolean"}}},
    Suspension.FOLLOW_UP: {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
}


def iso(ts: float) -> str:
    """ISO-8601 UTC with a Z, to the second."""
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def approval_digest(key: bytes, tool: str, args: Any) -> str:
    """Keyed digest of a write's exact bound arguments (a digest alone never reveals a masked value)."""
    canonical = json.dumps({"tool": tool, "args": args}, sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False, default=str)
    return "hmac-sha256:" + hmac.new(key, canonical.encode(), hashlib.sha256).hexdigest()


def _suspended(session: Any) -> Any:
    """The suspended node behind `session.pending()` (its bound arguments are not in the public view)."""
    pending = session.pending()
    if pending is None or session.env.task is None:
        return None, None
    return pending, session.env.task.nodes.get(pending["node"])


def _tables_of(session: Any, node: Any) -> list[dict[str, Any]]:
    """The approval's lists as tables (gate.approval_tables), from the write's bound arguments;
    none when the skill or tool is no longer loaded."""
    try:
        tool_meta = session.env.skill_module(node.skill).TOOLS.get(node.pending.tool)
    except KeyError:
        return []
    return approval_tables(tool_meta, node.pending.args) if tool_meta is not None else []


def interrupt_of(session: Any, key: bytes, tool_call_id: str | None = None) -> Interrupt | None:
    """The AG-UI interrupt for the session's open question, or None when nothing waits."""
    pending, node = _suspended(session)
    if pending is None:
        return None
    kind = pending["kind"]
    task = session.env.task.id
    meta: dict[str, Any] = {"kind": kind, "task": task, "node": pending["node"]}
    expires = None
    if kind == Suspension.APPROVAL and node is not None and node.pending is not None:
        meta.update(tool=node.pending.tool, summary=node.pending.summary,
                    digest=approval_digest(key, node.pending.tool, node.pending.args))
        tables = _tables_of(session, node)
        if tables:
            meta["tables"] = tables  # lists shown item by item: one row per passenger, line, …
        expires = iso(node.pending.asked_at + session.env.settings.reconfirm_after) if node.pending.asked_at else None
    elif kind == Suspension.VERIFY and node is not None:
        ev = session.env.evidence.get(node.verify_evidence or "")
        meta.update(tool=ev.tool if ev else None, evidence=node.verify_evidence)
    elif kind == Suspension.FOLLOW_UP:
        meta["expected_fields"] = list(pending.get("expected_fields") or [])
    return Interrupt(id=f"{task}.{pending['node']}.{kind}", reason=f"skillc.{kind.lower()}",
                     message=pending["question"], tool_call_id=tool_call_id if kind == Suspension.APPROVAL else None,
                     response_schema=_SCHEMAS[kind], expires_at=expires, metadata=meta)


def answer_of(session: Any, resume: list[ResumeEntry], key: bytes, caller: Identity, now: float) -> tuple[str, Any]:
    """What to give the runtime for a `resume`: ("send", text) or ("answer", decision dict).

    Checked before anything runs: the entry must answer the pending interrupt, an approval's
    digest must match the bound arguments as they are now (ApiError otherwise)."""
    current = interrupt_of(session, key)
    if len(resume) != 1:
        raise ApiError("RESUME_INVALID", "resume needs exactly one entry: the pending interrupt's answer")
    entry = resume[0]
    if current is None or entry.interrupt_id != current.id:
        raise ApiError("INTERRUPT_STALE", f"interrupt {entry.interrupt_id!r} is not pending"
                       + (f" (pending: {current.id})" if current else " (nothing is pending)"))
    meta = current.metadata or {}
    kind = meta["kind"]
    payload = entry.payload
    if kind == Suspension.APPROVAL:
        if entry.status == "cancelled":
            return "answer", {"decision": Decision.CANCEL, "approver": caller.platform, "decided_at": iso(now)}
        if not isinstance(payload, dict) or payload.get("decision") not in DECISIONS:
            raise ApiError("RESUME_INVALID", "an approval is answered with {decision: CONFIRM|REJECT|CANCEL, digest}")
        digest = payload.get("digest")
        if not isinstance(digest, str) or not hmac.compare_digest(digest, meta["digest"]):
            raise ApiError("APPROVAL_DIGEST_MISMATCH", "the approval's digest does not match the arguments "
                           "pending now; nothing was run", pending=current.model_dump(by_alias=True))
        return "answer", {"decision": payload["decision"], "digest": digest, "approver": caller.platform,
                          "decided_at": iso(now)}
    if entry.status == "cancelled":
        raise ApiError("RESUME_INVALID", f"a {kind} question cannot be cancelled; answer it")
    if kind == Suspension.VERIFY:
        if not isinstance(payload, dict) or not isinstance(payload.get("verified"), bool):
            raise ApiError("RESUME_INVALID", "a VERIFY question is answered with {verified: true|false}")
        return "answer", {"verified": payload["verified"]}
    text = payload.get("text") if isinstance(payload, dict) else payload
    if not isinstance(text, str) or not text.strip():
        raise ApiError("RESUME_INVALID", "a FOLLOW_UP question is answered with {text: \"…\"}")
    return "send", text
