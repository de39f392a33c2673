"""Human-readable lines for trace events: what `skillc demo` and `skillc chat` show a person."""
from __future__ import annotations

from skillc.runtime.words.events import EventName

import json
from typing import Any, Callable

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

    def event(self, ev: dict[str, Any]) -> None:
        """Print one event, if it is worth a line."""
        kind = ev.get("type")
        if kind == EventName.TURN_STARTED:
            self._said.clear()
            self.write("")
            if "message" in ev:
                self.write(self._c(BOLD, f"[turn {ev.get('turn')}] user: {ev.get('message')}"))
            else:
                answer = ev.get("answer") or {}
                said = ", ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in answer.items())
                self.write(self._c(BOLD, f"[turn {ev.get('turn')}] user answers: {said}"))
        elif kind == EventName.SKILL_REJECTED and self.verbose:
            codes = ", ".join(d.get("code") or "?" for d in ev.get("diagnostics", []))
            self.write(self._c(YELLOW, f"    skill {ev.get('skill')} not loaded ({codes})"))
        elif kind == EventName.AGENT_ROUTED:
            self.write(self._c(DIM, f"    routed to {ev.get('agent')} ({ev.get('via')})"))
        elif kind == EventName.TASK_PLANNED:
            nodes = ", ".join(f"{n['node']}={n['skill']}" + (f"→{n['target']}" if n.get("target") else "")
                              for n in ev.get("nodes", []))
            self.write(self._c(DIM, f"    plan ({ev.get('via')}): {nodes}"))
        elif kind == EventName.TOOL_CALL:
            self._tool_call(ev)
        elif kind == EventName.WRITE_SETTLED:
            ok = ev.get("status") == "SUCCESS"  # a failed settlement is never shown with a check mark
            head = f"write {ev.get('evidence')} ({ev.get('tool')}) settled {ev.get('status')} via {ev.get('via')}"
            said = self._business_failed.get(str(ev.get("evidence")))
            if ok and said is not None:  # SUCCESS is the outcome (the system answered), not the business verdict
                self.write(self._c(YELLOW, f"    ! {head}: its effect is known (the system answered: nothing is "
                                           f"uncertain, nothing is sent again); the business verdict is failure: {said}"))
            else:
                self.write(self._c(GREEN if ok else RED, f"    {'✓' if ok else '✗'} {head}"))
        elif kind == EventName.NODE_SUSPENDED:
            self._once(ev.get("question") or "")
            self.write(self._c(CYAN, f"    ? {ev.get('kind')}: {ev.get('question')}"))
        elif kind in (EventName.NODE_FINISHED, EventName.TASK_FINISHED) and ev.get("state") != "DONE" and self.verbose:
            # The reply names every failure reason (docs/interpretations.md: Reply): without -v it says it once.
            if self._once(ev.get("reason") or ""):
                what = "node" if kind == EventName.NODE_FINISHED else "task"
                self.write(self._c(RED, f"    {what} {ev.get(what)} {ev.get('state')}: {ev.get('reason')}"))
        elif kind == EventName.ERROR:
            if self._once(ev.get("message") or ""):
                self.write(self._c(RED, f"    error: {ev.get('message')}"))
        elif kind == EventName.TURN_REPLY:
            if self._once(ev.get("text") or ""):
                self.write(self._c(BOLD, f"  agent: {ev.get('text')}"))

    def _tool_call(self, ev: dict[str, Any]) -> None:
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
