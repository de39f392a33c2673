"""Human-readable lines for trace events: what `skillc demo` and `skillc chat` show a person.

One handler per event type (`HANDLERS`, keyed by `EventName`, each taking its typed event from
runtime/words/event_types.py); the types a person is not shown are listed in `SILENT` (a test
keeps every type in one of the two)."""
from __future__ import annotations

import json
from typing import Any, Callable

from skillc.runtime.words.event_types import (AgentRouted, Error, NodeFinished, NodeSuspended, SkillRejected,
                                              TaskFinished, TaskPlanned, ToolCall, TraceEvent, TurnReply,
                                              TurnStarted, WriteSettled)
from skillc.runtime.words.events import EventName
from skillc.runtime.words.vocab import EvidenceStatus, NodeStatus

DIM, BOLD, RED, GREEN, YELLOW, CYAN, RESET = "\033[2m", "\033[1m", "\033[31m", "\033[32m", "\033[33m", "\033[36m", "\033[0m"


class Renderer:
    """Turns trace events into printed lines (colour only on a terminal)."""

    def __init__(self, write: Callable[[str], None], *, color: bool = False, verbose: bool = False) -> None:
        self.write = write
        self.color = color
        self.verbose = verbose
        self._said: set[str] = set()  # texts shown this turn: a reason or question is shown once
        self._business_failed: dict[str, str] = {}  # evidence -> the system's message, for a write it refused

    def _once(self, text: str) -> bool:
        """True the first time `text` is seen this turn (a failure reason repeats on the node, the
        task and the reply; a question on the suspension and the reply)."""
        key = " ".join(str(text).split()).removeprefix("error: ")  # a reply repeats an error as "error: …"
        if key in self._said:
            return False
        self._said.add(key)
        return True

    def _c(self, code: str, text: str) -> str:
        text = text.replace("\n", "\n      ")
        return f"{code}{text}{RESET}" if self.color else text

    def progress(self, tool: str, label: str) -> None:
        """A tool starts: its label as a progress hint (§4)."""
        self.write(self._c(DIM, f"    … {label}"))

    def event(self, ev: TraceEvent | dict[str, Any]) -> None:
        """Print one event, if it is worth a line: its type's handler (`HANDLERS`; a type in
        `SILENT`, or one this version does not know, prints nothing)."""
        handler = HANDLERS.get(ev.get("type", ""))
        if handler is not None:
            handler(self, ev)

    # ------------------------------------------------------------ one handler per event type

    def _turn_started(self, ev: TurnStarted) -> None:
        self._said.clear()
        self.write("")
        if "message" in ev:
            self.write(self._c(BOLD, f"[turn {ev.get('turn')}] user: {ev.get('message')}"))
        else:
            answer = ev.get("answer") or {}
            said = ", ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in answer.items())
            self.write(self._c(BOLD, f"[turn {ev.get('turn')}] user answers: {said}"))

    def _skill_rejected(self, ev: SkillRejected) -> None:
        if self.verbose:
            codes = ", ".join(d.get("code") or "?" for d in ev.get("diagnostics", []))
            self.write(self._c(YELLOW, f"    skill {ev.get('skill')} not loaded ({codes})"))

    def _agent_routed(self, ev: AgentRouted) -> None:
        self.write(self._c(DIM, f"    routed to {ev.get('agent')} ({ev.get('via')})"))

    def _task_planned(self, ev: TaskPlanned) -> None:
        nodes = ", ".join(f"{n['node']}={n['skill']}" + (f"→{n['target']}" if n.get("target") else "")
                          for n in ev.get("nodes", []))
        self.write(self._c(DIM, f"    plan ({ev.get('via')}): {nodes}"))

    def _write_settled(self, ev: WriteSettled) -> None:
        ok = ev.get("status") == EvidenceStatus.SUCCESS  # a failed settlement is never shown with a check mark
        head = f"write {ev.get('evidence')} ({ev.get('tool')}) settled {ev.get('status')} via {ev.get('via')}"
        said = self._business_failed.get(str(ev.get("evidence")))
        if ok and said is not None:  # SUCCESS is the outcome (the system answered), not the business verdict
            self.write(self._c(YELLOW, f"    ! {head}: its effect is known (the system answered: nothing is "
                                       f"uncertain, nothing is sent again); the business verdict is failure: {said}"))
        else:
            self.write(self._c(GREEN if ok else RED, f"    {'✓' if ok else '✗'} {head}"))

    def _node_suspended(self, ev: NodeSuspended) -> None:
        self._once(ev.get("question") or "")
        self.write(self._c(CYAN, f"    ? {ev.get('kind')}: {ev.get('question')}"))

    def _node_finished(self, ev: NodeFinished) -> None:
        self._failed("node", ev.get("node"), ev.get("state"), ev.get("reason"))

    def _task_finished(self, ev: TaskFinished) -> None:
        self._failed("task", ev.get("task"), ev.get("state"), ev.get("reason"))

    def _failed(self, what: str, which: str | None, state: str | None, reason: str | None) -> None:
        # The reply names every failure reason (docs/interpretations.md: Reply): without -v it says it once.
        if state != NodeStatus.DONE and self.verbose and self._once(reason or ""):
            self.write(self._c(RED, f"    {what} {which} {state}: {reason}"))

    def _error(self, ev: Error) -> None:
        if self._once(ev.get("message") or ""):
            self.write(self._c(RED, f"    error: {ev.get('message')}"))

    def _turn_reply(self, ev: TurnReply) -> None:
        if self._once(ev.get("text") or ""):
            self.write(self._c(BOLD, f"  agent: {ev.get('text')}"))

    def _tool_call(self, ev: ToolCall) -> None:
        tool = ev.get("tool")
        if ev.get("business_ok") is False and ev.get("evidence"):
            self._business_failed[str(ev["evidence"])] = str(ev.get("message") or ev.get("error"))
        if ev.get("builtin") and ev.get("ok") and not self.verbose:
            return
        args = json.dumps(ev.get("args"), ensure_ascii=False, default=str)
        if ev.get("ok"):
            extra = " (replayed, not sent again)" if ev.get("replayed") else ""
            where = f" → {ev.get('evidence')}" if ev.get("evidence") else ""
            self.write(self._c(GREEN, f"    ✓ {tool} {args}{where}{extra}"))
            return
        self.write(self._c(RED, f"    ✗ {tool} {args}: {ev.get('error')} — {ev.get('message')}"))
        if ev.get("next"):
            self.write(self._c(DIM, f"      next: {ev.get('next')}"))


# keyed by EventName, looked up by a plain string too (a trace read back from a file)
HANDLERS: dict[str, Callable[[Renderer, Any], None]] = {
    EventName.TURN_STARTED: Renderer._turn_started,
    EventName.SKILL_REJECTED: Renderer._skill_rejected,  # with -v
    EventName.AGENT_ROUTED: Renderer._agent_routed,
    EventName.TASK_PLANNED: Renderer._task_planned,
    EventName.TOOL_CALL: Renderer._tool_call,
    EventName.WRITE_SETTLED: Renderer._write_settled,
    EventName.NODE_SUSPENDED: Renderer._node_suspended,
    EventName.NODE_FINISHED: Renderer._node_finished,  # a failure, with -v
    EventName.TASK_FINISHED: Renderer._task_finished,  # a failure, with -v
    EventName.ERROR: Renderer._error,
    EventName.TURN_REPLY: Renderer._turn_reply,
}
"""The event types a person is shown, each by its handler."""

SILENT: frozenset[EventName] = frozenset({
    EventName.STUDIO_STALE,  # the service's log says it (chat and demo read a local studio)
    EventName.TURN_REPLAYED,  # the reply itself follows
    EventName.NODE_STARTED, EventName.NODE_SKIPPED, EventName.NODE_RESUMED,  # the plan and the calls show the nodes
    EventName.MCP_INVOKED,  # its tool.call shows the call
    EventName.OUTPUT_SET,
    EventName.AUDIT_APPROVAL, EventName.AUDIT_SETTLEMENT,  # for the audit log, not the conversation
})
"""The event types a person is not shown."""
