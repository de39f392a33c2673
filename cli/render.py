"""Human-readable lines for trace events: what `skillc demo` and `skillc chat` show a person."""
from __future__ import annotations

import json
from typing import Any, Callable

DIM, BOLD, RED, GREEN, YELLOW, CYAN, RESET = "\033[2m", "\033[1m", "\033[31m", "\033[32m", "\033[33m", "\033[36m", "\033[0m"


class Renderer:
    """Turns trace events into printed lines (colour only on a terminal)."""

    def __init__(self, write: Callable[[str], None], *, color: bool = False, verbose: bool = False) -> None:
        self.write = write
        self.color = color
        self.verbose = verbose

    def _c(self, code: str, text: str) -> str:
        text = text.replace("\n", "\n      ")
        return f"{code}{text}{RESET}" if self.color else text

    def progress(self, tool: str, label: str) -> None:
        """A tool starts: its label as a progress hint (§4)."""
        self.write(self._c(DIM, f"    … {label}"))

    def event(self, ev: dict[str, Any]) -> None:
        """Print one event, if it is worth a line."""
        kind = ev.get("type")
        if kind == "turn.started":
            self.write("")
            if "message" in ev:
                self.write(self._c(BOLD, f"[turn {ev.get('turn')}] user: {ev.get('message')}"))
            else:
                answer = ev.get("answer") or {}
                said = ", ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in answer.items())
                self.write(self._c(BOLD, f"[turn {ev.get('turn')}] user answers: {said}"))
        elif kind == "skill.rejected" and self.verbose:
            codes = ", ".join(d.get("code") or "?" for d in ev.get("diagnostics", []))
            self.write(self._c(YELLOW, f"    skill {ev.get('skill')} not loaded ({codes})"))
        elif kind == "agent.routed":
            self.write(self._c(DIM, f"    routed to {ev.get('agent')} ({ev.get('via')})"))
        elif kind == "task.planned":
            nodes = ", ".join(f"{n['node']}={n['skill']}" + (f"→{n['target']}" if n.get("target") else "")
                              for n in ev.get("nodes", []))
            self.write(self._c(DIM, f"    plan ({ev.get('via')}): {nodes}"))
        elif kind == "tool.call":
            self._tool_call(ev)
        elif kind == "write.settled":
            self.write(self._c(GREEN if ev.get("status") == "SUCCESS" else RED,
                               f"    ✓ write {ev.get('evidence')} ({ev.get('tool')}) settled {ev.get('status')} via {ev.get('via')}"))
        elif kind == "node.suspended":
            self.write(self._c(CYAN, f"    ? {ev.get('kind')}: {ev.get('question')}"))
        elif kind == "node.finished" and ev.get("state") != "DONE":
            self.write(self._c(RED, f"    node {ev.get('node')} {ev.get('state')}: {ev.get('reason')}"))
        elif kind == "task.finished" and ev.get("state") != "DONE":
            self.write(self._c(RED, f"    task {ev.get('task')} {ev.get('state')}: {ev.get('reason')}"))
        elif kind == "error":
            self.write(self._c(RED, f"    error: {ev.get('message')}"))
        elif kind == "turn.reply":
            self.write(self._c(BOLD, f"  agent: {ev.get('text')}"))

    def _tool_call(self, ev: dict[str, Any]) -> None:
        tool = ev.get("tool")
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
