"""The tamper-evident trace: a hash chain per session, its verification, and audit events.

Every event carries `prev` (the digest of its session's previous event; for the session's first
event, the session's *anchor*) and `hash` (its own digest, over its canonical JSON without
`hash`). A digest is SHA-256, or HMAC-SHA-256 when a key is given (`SKILLC_AUDIT_KEY`, which
the config layer reads for whoever opens a runtime: runtime/outside/config.py `audit_key`): without the key nobody can rewrite the chain after an edit.
The anchor is the digest of `skillc-trace-anchor\\0<session>`.

`verify` walks a trace in file order and reports the first event that was altered (its content
no longer matches its hash), removed (an event's predecessor is nowhere in the trace), or
reordered (an event comes before its predecessor, or `seq` goes backwards).

Audit events follow the events they explain (`follow`, which the session calls with itself, the
one holding the facts, after emitting a trigger): `audit.approval` after an approval is
asked (decision REQUESTED) or answered (CONFIRM / REJECT / CANCEL), `audit.settlement` after a
write is settled; each with `who` (the platform ids of §11, and whether the user or the runtime
acted), `what` (tool, digest of the arguments with sensitive values masked, digest of the
idempotency key) and `at` (the runtime clock, ISO 8601 UTC).
"""
from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from skillc.runtime.words.event_types import (AuditApproval, AuditSettlement, AuditWhat, NodeResumed, NodeSuspended,
                                              TraceEvent, WriteSettled, as_event)

from skillc.runtime.words.events import EventName
from skillc.runtime.outside.redact import mask_args
from skillc.runtime.words.vocab import Suspension

KEY_ENV = "SKILLC_AUDIT_KEY"  # read by the config layer (runtime/outside/config.py audit_key), never here
_ANCHOR = "skillc-trace-anchor\0"
TRIGGERS = frozenset({EventName.NODE_SUSPENDED, EventName.NODE_RESUMED, EventName.WRITE_SETTLED})
_WHO_FIELDS = ("userId", "memberId", "organId")


# The encoder `json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"),
# default=str)` builds on every call, built once (a third of a digest's cost for a trace event).
# No circular check: trace values come from JSON, and a cycle would end in RecursionError.
_CANONICAL = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, str, json.encoder.encode_basestring_ascii, None, ":", ",", True, False, True) \
    if json.encoder.c_make_encoder is not None else None  # type: ignore[attr-defined]


def canonical(value: Any) -> bytes:
    """The bytes a digest is taken over: sorted keys, ASCII, no spaces (any JSON round trip of the
    value, whatever its key order or escapes, gives the same bytes)."""
    try:
        if _CANONICAL is not None and isinstance(value, dict):
            text = "".join(_CANONICAL(value, 0))
        else:
            text = json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)
    except TypeError:  # keys of mixed types cannot be sorted: compare them as JSON would show them
        text = json.dumps(json.loads(json.dumps(value, default=str)), sort_keys=True, ensure_ascii=True,
                          separators=(",", ":"))
    return text.encode("ascii")


class AuditChain:
    """Digests (keyed or not) and each session's chain head, for a writer or a verifier."""

    def __init__(self, key: bytes | str | None = None) -> None:
        self.key: bytes | None = key.encode() if isinstance(key, str) else key
        self.heads: dict[str, str] = {}

    @property
    def keyed(self) -> bool:
        """True when digests are HMACs."""
        return self.key is not None

    def digest(self, data: bytes) -> str:
        """Hex SHA-256 of `data`, or its HMAC with the key."""
        if self.key is not None:
            return hmac.digest(self.key, data, "sha256").hex()
        return hashlib.sha256(data).hexdigest()

    def anchor(self, session: str) -> str:
        """The `prev` of a session's first event."""
        return self.digest((_ANCHOR + session).encode("utf-8", "surrogatepass"))

    def value_digest(self, value: Any) -> str:
        """A digest of any JSON value (audit `what`)."""
        return self.digest(canonical(value))

    def event_hash(self, event: dict[str, Any]) -> str:
        """The digest of an event without its own `hash` field."""
        if "hash" in event:
            event = {k: v for k, v in event.items() if k != "hash"}
        return self.digest(canonical(event))

    def seal(self, event: dict[str, Any]) -> None:
        """Add `prev` and `hash` to a new event and advance its session's head."""
        session = str(event.get("session"))
        event["prev"] = self.heads.get(session) or self.anchor(session)
        event["hash"] = self.digest(canonical(event))
        self.heads[session] = event["hash"]


# ---------------------------------------------------------------- verification


@dataclass
class Problem:
    """The first break in a chain: where (line, seq), what kind, and a readable explanation."""

    kind: str  # altered | removed | reordered | unchained
    line: int
    seq: Any
    type: Any
    session: Any
    message: str

    def __str__(self) -> str:
        return (f"line {self.line}: seq {self.seq} ({self.type}, session {self.session}): "
                f"{self.kind.upper()}: {self.message}")


@dataclass
class Verdict:
    """What `verify` found: the first problem (None when the chain holds) and counts."""

    problem: Problem | None
    events: int = 0
    sessions: int = 0
    keyed: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no event was altered, removed or reordered."""
        return self.problem is None


def verify(events: Iterable[tuple[int, dict[str, Any]]], key: bytes | str | None = None) -> Verdict:
    """Recompute every session's chain over (line, event) pairs in file order; the first break.
    `key` is the audit key the trace was written with (None: unkeyed)."""
    chain = AuditChain(key)
    items = list(events)
    # Where each event's own hash sits, per session, to tell a reordering from a removal.
    position: dict[tuple[str, str], int] = {}
    for i, (_, ev) in enumerate(items):
        if isinstance(ev.get("hash"), str):
            position.setdefault((str(ev.get("session")), ev["hash"]), i)
    verdict = Verdict(None, len(items), len({str(ev.get("session")) for _, ev in items}), chain.keyed)
    heads: dict[str, tuple[str, Any]] = {}  # session -> (hash, seq) of its last event so far
    last_seq: Any = None
    for i, (line, ev) in enumerate(items):
        session = str(ev.get("session"))
        seq = ev.get("seq")

        def stop(kind: str, message: str) -> Verdict:
            verdict.problem = Problem(kind, line, seq, ev.get("type"), session, message)
            return verdict

        if not isinstance(ev.get("hash"), str) or not isinstance(ev.get("prev"), str):
            return stop("unchained", "the event has no prev/hash (written without the chain, or stripped)")
        if chain.event_hash(ev) != ev["hash"]:
            hint = " (or the trace was written with another audit key)" if i == 0 or session not in heads else ""
            return stop("altered", f"its content does not match its hash{hint}")
        if isinstance(seq, int) and isinstance(last_seq, int) and seq <= last_seq:
            return stop("reordered", f"seq {seq} comes after seq {last_seq}")
        last_seq = seq if isinstance(seq, int) else last_seq
        expected = heads[session][0] if session in heads else chain.anchor(session)
        if ev["prev"] != expected:
            where = position.get((session, ev["prev"]))
            if ev["prev"] == chain.anchor(session):
                verdict.notes.append(f"line {line}: session {session} restarts its chain at seq {seq} "
                                     "(a new writer took the session over)")
            elif where is not None and where > i:
                before = items[where][1].get("seq")
                return stop("reordered", f"it comes before its predecessor, seq {before}")
            elif where is not None and _resumed_after_crash(items, where, i, session):
                verdict.notes.append(f"line {line}: session {session} continues at seq {seq} from seq "
                                     f"{items[where][1].get('seq')}, its last stored point: the events between "
                                     "are the tail of a turn whose process stopped before that turn ended")
            elif where is not None:
                after = items[where][1].get("seq")
                now = heads[session][1] if session in heads else None
                return stop("reordered", f"its predecessor is seq {after}, but seq {now} comes between them")
            else:
                after = f"after seq {heads[session][1]}" if session in heads else "at the start of the session"
                return stop("removed", f"the event(s) before it are missing ({after}), or its predecessor "
                            "was altered and re-hashed")
        heads[session] = (ev["hash"], seq)
    for session, (_, seq) in heads.items():
        last = next(ev for _, ev in reversed(items) if str(ev.get("session")) == session)
        if not _is(last, EventName.TURN_REPLY):
            verdict.notes.append(f"session {session} ends at seq {seq} ({last.get('type')}), not at a turn.reply: "
                                 "its last turn was interrupted, or the trace was cut short")
    return verdict


def _resumed_after_crash(items: list[tuple[int, dict[str, Any]]], where: int, at: int, session: str) -> bool:
    """A process taking a session up continues its chain from the head the store kept (its last
    unit of work); when the previous process died after that unit, the events it wrote since are
    left behind. That fork is a restart, not an edit, when the new branch opens a turn and every
    bypassed event of the session belongs to the same turn as the head and opens none."""
    if not _is(items[at][1], EventName.TURN_STARTED):
        return False
    turn = items[where][1].get("turn")
    bypassed = [ev for _, ev in items[where + 1:at] if str(ev.get("session")) == session]
    return bool(bypassed) and all(ev.get("turn") == turn and not _is(ev, EventName.TURN_STARTED) for ev in bypassed)


def _is(raw: dict[str, Any], name: EventName) -> bool:
    """Whether a line read back (any JSON object: a file may have been edited) is an event of type `name`."""
    event = as_event(raw)
    return event is not None and event["type"] == name


# ---------------------------------------------------------------- audit events


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _who(env: Any, actor: str) -> dict[str, Any]:
    platform = getattr(env, "platform", None) or {}
    return {"actor": actor, **{k: platform[k] for k in _WHO_FIELDS if k in platform}}


def _masked(env: Any, skill: str | None, tool: str, args: Any) -> Any:
    """The arguments with the contract's sensitive values masked (a digest must not let anyone
    test guesses of a secret)."""
    try:
        meta = env.skill_module(skill).TOOLS.get(tool) if skill else None
    except (KeyError, AttributeError):
        meta = None
    if meta is None:
        return args
    return mask_args(args, meta.sensitive_paths)


_PLAIN = AuditChain(None)  # digests for a writer without a chain


def approval_id(chain: AuditChain | None, session: str, task: Any, node: Any, tool: str, asked_at: float) -> str:
    """A stable id for one approval request: the same on the question and on its answer."""
    material = canonical([session, task, node, tool, asked_at])
    return "ap-" + (chain or _PLAIN).digest(material)[:16]


def follow(event: TraceEvent, env: Any, chain: AuditChain | None) -> Iterator[AuditApproval | AuditSettlement]:
    """The audit events that follow `event` (one of TRIGGERS) in session `env`; the writer stamps
    them with the trigger's session, turn and task."""
    if event["type"] in (EventName.NODE_SUSPENDED, EventName.NODE_RESUMED):
        yield from _approval(event, env, chain)
    elif event["type"] == EventName.WRITE_SETTLED:
        yield from _settlement(event, env, chain)


def _node_of(env: Any, node_id: str) -> Any:
    task = getattr(env, "task", None)
    return task.nodes.get(node_id) if task is not None and node_id else None


def _approval(event: NodeSuspended | NodeResumed, env: Any, chain: AuditChain | None) -> Iterator[AuditApproval]:
    """An approval asked (its question) or answered (the user's decision)."""
    if event["kind"] != Suspension.APPROVAL:
        return
    node_id = event["node"]
    node = _node_of(env, node_id)
    pending = getattr(node, "pending", None)
    if node is None or pending is None:
        return
    if event["type"] == EventName.NODE_SUSPENDED:
        decision, actor = "REQUESTED", "runtime"
    else:
        answer = event["answer"]
        decision, actor = str(answer.get("decision") if isinstance(answer, dict) else None), "user"
    args = _masked(env, node.skill, pending.tool, pending.args)
    yield {"type": EventName.AUDIT_APPROVAL, "node": node_id,
           "approval": approval_id(chain, event["session"], event.get("task"), node_id, pending.tool, pending.asked_at),
           "decision": decision, "who": _who(env, actor),
           "what": {"tool": pending.tool, "args_digest": (chain or _PLAIN).value_digest(args)},
           "at": _iso(env.now())}


def _settlement(event: WriteSettled, env: Any, chain: AuditChain | None) -> Iterator[AuditSettlement]:
    """A write settled: by its call, a verifying read, or the user."""
    ev = getattr(env, "evidence", {}).get(event["evidence"])
    if ev is None:
        return
    digest = (chain or _PLAIN).value_digest
    node = _node_of(env, event["node"])
    skill = node.skill if node is not None else None
    what: AuditWhat = {"tool": ev.tool, "args_digest": digest(_masked(env, skill, ev.tool, ev.args))}
    if ev.idem_key:
        what["idempotency_key_digest"] = digest(ev.idem_key)
    via = event["via"]
    yield {"type": EventName.AUDIT_SETTLEMENT, "node": event["node"], "evidence": ev.id, "status": event["status"],
           "via": via, "who": _who(env, "user" if via == "user" else "runtime"), "what": what, "at": _iso(env.now())}
