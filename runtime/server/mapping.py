"""One run's trace events as AG-UI 1.0 events (docs/API.md §2), typed from `ag_ui.core`.

The runtime writes its trace; a listener hands each event of the running session to this mapper,
which appends the AG-UI events to the run's log. Tool arguments are the trace's (sensitive values
already "***"), so nothing reaches a front end that the audit log would not show.
"""
from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from typing import Any

from ag_ui.core import PROTOCOL_VERSION, EventType

from skillc.runtime.text import jsontext
from skillc.runtime.words.errors import ErrorName
from skillc.runtime.words.event_types import (AgentRouted, Error, NodeFinished, NodeResumed, NodeSkipped, NodeStarted,
                                              NodeSuspended, SkillRejected, TaskFinished, TaskPlanned, ToolCall,
                                              TraceEvent, WriteSettled)
from skillc.runtime.words.events import EventName
from skillc.runtime.model.base import ModelError
from skillc.runtime.server.agui_wire import encode, encode_with_raw
from skillc.runtime.server.errors import RUN_ERRORS, ApiError
from skillc.runtime.server.interrupts import interrupt_of
from skillc.runtime.server.runs import RunLog

log = logging.getLogger("skillc.server")

_RESULT_FIELDS = ("ok", "error", "code", "evidence", "status", "business_ok", "message")


def _json(value: Any) -> str:
    return jsontext.dumps(value)


class RunMapper:
    """Turns the trace events of one run into AG-UI events on its `RunLog`."""

    def __init__(self, run: RunLog, session: Any, digest_key: bytes) -> None:
        self.run = run
        self.session = session
        self.digest_key = digest_key
        self.open_steps: list[str] = []
        self.calls = 0
        self.gated: dict[str, str] = {}  # node -> toolCallId of the write the gate stopped
        self.failure: tuple[str, str] | None = None  # (detail, code) of the `error` event that failed the turn

    # ------------------------------------------------------------ output

    def emit(self, kind: EventType, fields: dict[str, Any], metadata: dict[str, Any] | None = None) -> None:
        """Append one fixed-shape event, encoded once without a model (runtime/server/agui_wire.py)."""
        self.run.append(encode(kind, fields, metadata))

    def custom(self, name: str, value: dict[str, Any]) -> None:
        """A skillc CUSTOM event (names are namespaced `skillc.*`)."""
        self.emit(EventType.CUSTOM, {"name": name, "value": value})

    def snapshot(self) -> None:
        """STATE_SNAPSHOT: the session state, as GET /api/sessions/{id}/state returns it."""
        # the state's JSON text as the state endpoint sends it (unknown objects as their str()),
        # written into the event as it is: encoded once, never read back
        self.run.append(encode_with_raw(EventType.STATE_SNAPSHOT, {}, "snapshot", jsontext.dumps(self.session.state())))

    def start(self) -> None:
        """RUN_STARTED, declaring the AG-UI version spoken (a producer must)."""
        self.emit(EventType.RUN_STARTED, {"threadId": self.run.thread_id, "runId": self.run.run_id,
                                          "protocolVersion": PROTOCOL_VERSION})

    def _step_finished(self, node: str) -> None:
        self.emit(EventType.STEP_FINISHED, {"stepName": node})

    def _close_steps(self) -> None:
        while self.open_steps:
            self._step_finished(self.open_steps.pop())

    def finish(self, reply: Any) -> None:
        """The reply as a text message, a final snapshot, RUN_FINISHED with success or interrupt;
        RUN_ERROR instead when the turn failed (the model endpoint down or answering garbage)."""
        if self.failure is None and getattr(reply, "kind", None) == ModelError.name:
            self.failure = (str(reply.text), ModelError.name)  # a failed turn's reply, given again
        if self.failure is not None:
            self.snapshot()  # the task is still open: the next message continues it
            self.failed(*self.failure)
            return
        self._close_steps()
        if reply is not None and reply.text:
            mid = f"{self.run.run_id}.reply"
            self.emit(EventType.TEXT_MESSAGE_START, {"messageId": mid, "role": "assistant"})
            self.emit(EventType.TEXT_MESSAGE_CONTENT, {"messageId": mid, "delta": reply.text})
            self.emit(EventType.TEXT_MESSAGE_END, {"messageId": mid})
        self.snapshot()
        interrupt = interrupt_of(self.session, self.digest_key, self.gated_call())
        # RunFinishedSuccessOutcome / RunFinishedInterruptOutcome as the package writes them; the
        # interrupt stays its model (interrupts.py builds it), dumped in its own wire form
        outcome: dict[str, Any] = {"type": "success"} if interrupt is None else {
            "type": "interrupt", "interrupts": [interrupt.model_dump(by_alias=True, mode="json")]}
        result = {"reply": getattr(reply, "text", None), "task": getattr(reply, "task", None),
                  "suspended": interrupt is not None}
        self.emit(EventType.RUN_FINISHED, {"threadId": self.run.thread_id, "runId": self.run.run_id,
                                           "result": result, "outcome": outcome})
        self.run.finished = True  # its reply is delivered once a client reads this far

    def error(self, message: str, code: str, metadata: dict[str, Any] | None = None) -> None:
        """RUN_ERROR after closing what is open (the run is over)."""
        self._close_steps()
        self.emit(EventType.RUN_ERROR, {"message": message, "code": code}, metadata)

    def refused(self, exc: ApiError) -> None:
        """A resume that does not fit the pending interrupt: the run's RUN_ERROR, nothing ran; a
        digest mismatch carries the interrupt pending now (to ask again)."""
        pending = exc.extra.get("pending")
        self.error(exc.message, exc.code, {"pending": pending} if pending is not None else None)

    def failed(self, detail: str, code: str = "INTERNAL") -> None:
        """The run failed (`code`: MODEL_ERROR when the model could not answer, INTERNAL for a bug):
        the end user gets a short message and a reference; the detail (the model's URL, the
        upstream's answer, the exception) goes to the server log under that reference only."""
        code = code if code in RUN_ERRORS else "INTERNAL"
        reference = secrets.token_hex(6)
        log.error("run %s of session %s failed (reference %s, %s): %s", self.run.run_id, self.run.thread_id,
                  reference, code, detail)
        self.error(f"{RUN_ERRORS[code]} (reference {reference})", code, {"reference": reference})

    def gated_call(self) -> str | None:
        """The toolCallId of the write the pending approval is about (when it was in this run)."""
        pending = self.session.pending()
        return self.gated.get(pending["node"]) if pending else None

    # ------------------------------------------------------------ input

    def progress(self, tool: str, label: str) -> None:
        """A business tool is about to be called: its progress label."""
        self.custom("skillc.progress", {"node": self.open_steps[-1] if self.open_steps else None,
                                        "tool": tool, "label": label})

    def trace(self, ev: TraceEvent) -> None:
        """One trace event of this run's session, to its handler (`_HANDLERS`; `NOT_SHOWN`: none)."""
        handler = _HANDLERS.get(ev["type"])
        if handler is not None:
            handler(self, ev)

    # ------------------------------------------------------------ one handler per event type

    def _node_started(self, ev: NodeStarted) -> None:
        node: str = ev.get("node") or ""
        if node not in self.open_steps:
            meta: dict[str, Any] = {k: ev[k] for k in ("skill", "kind", "target") if k in ev}
            self.emit(EventType.STEP_STARTED, {"stepName": node}, meta or None)
            self.open_steps.append(node)

    def _node_resumed(self, ev: NodeResumed) -> None:
        node: str = ev.get("node") or ""
        if node not in self.open_steps:  # its `kind` is the suspension's, not the node's
            self.emit(EventType.STEP_STARTED, {"stepName": node}, {"resumed": ev.get("kind")})
            self.open_steps.append(node)

    def _node_skipped(self, ev: NodeSkipped) -> None:
        node: str = ev.get("node") or ""
        self.emit(EventType.STEP_STARTED, {"stepName": node}, {"skill": ev.get("skill"), "skipped": True})
        self._step_finished(node)
        self.snapshot()

    def _node_suspended(self, ev: NodeSuspended) -> None:
        """The step ends; a suspension ends the turn too, whose final snapshot follows."""
        self._end_step(ev.get("node") or "")

    def _node_finished(self, ev: NodeFinished) -> None:
        self._end_step(ev.get("node") or "")
        self.snapshot()

    def _end_step(self, node: str) -> None:
        if node in self.open_steps:
            self.open_steps.remove(node)
            self._step_finished(node)

    def _task_planned(self, ev: TaskPlanned) -> None:
        self.snapshot()

    def _write_settled(self, ev: WriteSettled) -> None:
        self.custom("skillc.write_settled", {k: ev.get(k) for k in ("node", "evidence", "tool", "status", "via")})

    def _agent_routed(self, ev: AgentRouted) -> None:
        self.custom("skillc.routed", {"agent": ev.get("agent"), "via": ev.get("via")})

    def _skill_rejected(self, ev: SkillRejected) -> None:
        self.custom("skillc.skill_rejected", {"skill": ev.get("skill"), "diagnostics": ev.get("diagnostics")})

    def _error(self, ev: Error) -> None:
        """The run fails; its message is for the log, not the stream."""
        self.failure = (str(ev.get("message") or ""), str(ev.get("code") or "INTERNAL"))

    def _task_finished(self, ev: TaskFinished) -> None:
        self.custom("skillc.task_finished", {"task": ev.get("task"), "state": ev.get("state"),
                                             "reason": ev.get("reason")})

    def _tool_call(self, ev: ToolCall) -> None:
        self.calls += 1
        cid = f"{self.run.run_id}.c{self.calls}"
        tool = str(ev.get("tool"))
        self.emit(EventType.TOOL_CALL_START, {"toolCallId": cid, "toolCallName": tool})
        self.emit(EventType.TOOL_CALL_ARGS, {"toolCallId": cid,
                                             "delta": _json(ev.get("args") if ev.get("args") is not None else {})})
        self.emit(EventType.TOOL_CALL_END, {"toolCallId": cid})
        result = {k: ev.get(k) for k in _RESULT_FIELDS}
        self.emit(EventType.TOOL_CALL_RESULT, {"messageId": f"{cid}.result", "toolCallId": cid, "content": _json(result),
                                               "role": "tool"})
        if ev.get("error"):
            self.custom("skillc.verdict", {"node": ev.get("node"), "tool": tool, "error": ev.get("error"),
                                           "code": ev.get("code"), "message": ev.get("message")})
            if ev.get("error") == ErrorName.APPROVAL_REQUIRED and ev.get("node"):
                self.gated[ev["node"]] = cid


# The trace events a run shows, each to its handler (which takes that type's TypedDict); keyed by
# EventName. The others (NOT_SHOWN) are not part of the AG-UI stream; a test keeps every type in one.
_HANDLERS: dict[str, Callable[[RunMapper, Any], None]] = {
    EventName.NODE_STARTED: RunMapper._node_started,
    EventName.NODE_RESUMED: RunMapper._node_resumed,
    EventName.NODE_SKIPPED: RunMapper._node_skipped,
    EventName.NODE_SUSPENDED: RunMapper._node_suspended,
    EventName.NODE_FINISHED: RunMapper._node_finished,
    EventName.TASK_PLANNED: RunMapper._task_planned,
    EventName.TOOL_CALL: RunMapper._tool_call,
    EventName.WRITE_SETTLED: RunMapper._write_settled,
    EventName.AGENT_ROUTED: RunMapper._agent_routed,
    EventName.SKILL_REJECTED: RunMapper._skill_rejected,
    EventName.ERROR: RunMapper._error,
    EventName.TASK_FINISHED: RunMapper._task_finished,
}

NOT_SHOWN: frozenset[EventName] = frozenset({
    EventName.STUDIO_STALE,  # the server sends its own skillc.studio_stale as it writes the event
    EventName.TURN_STARTED, EventName.TURN_REPLAYED, EventName.TURN_REPLY,  # the run itself: RUN_STARTED, its reply
    EventName.MCP_INVOKED, EventName.OUTPUT_SET,  # inside a step: its tool call and the state snapshot show them
    EventName.AUDIT_APPROVAL, EventName.AUDIT_SETTLEMENT,  # for the audit log, not a front end
})
"""The trace events a run does not show as events of their own."""
