"""The trace: every step of a run as JSON-lines events (conformance/FORMAT.md), one writer.

The trace is the audit log, the scenario runner's input and the demo's transcript. Events get a
run-wide `seq`; callers give `session`, `turn` and, where they apply, `task` / `node`.
"""
from __future__ import annotations

import json
from typing import IO, Any, Callable

from skillc.runtime.support import at_path

MASK = "***"


class TraceWriter:
    """Collects events in memory and/or streams them to a file and listeners."""

    def __init__(self, path: str | None = None, *, keep: bool = True) -> None:
        self.events: list[dict[str, Any]] = []
        self._keep = keep
        self._seq = 0
        self._fh: IO[str] | None = open(path, "w", encoding="utf-8") if path else None
        self.listeners: list[Callable[[dict[str, Any]], None]] = []

    def emit(self, type_: str, *, session: str, turn: int, **fields: Any) -> dict[str, Any]:
        """Record one event; `task`/`node` are dropped when None."""
        self._seq += 1
        event: dict[str, Any] = {"seq": self._seq, "type": type_, "session": session, "turn": turn}
        for key in ("task", "node"):
            if key in fields:
                value = fields.pop(key)
                if value is not None:
                    event[key] = value
        event.update(fields)
        if self._keep:
            self.events.append(event)
        if self._fh:
            self._fh.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
            self._fh.flush()
        for listener in self.listeners:
            listener(event)
        return event

    def close(self) -> None:
        """Close the file, if any."""
        if self._fh:
            self._fh.close()
            self._fh = None


def mask_args(args: Any, sensitive_paths: list[tuple]) -> Any:
    """A copy of `args` with the values at the sensitive paths replaced by "***"."""
    if not sensitive_paths or not isinstance(args, dict):
        return args
    out = json.loads(json.dumps(args, default=str))
    for parts in sensitive_paths:
        at_path(out, parts, _put_mask)
    return out


def _put_mask(container: Any, key: Any) -> None:
    container[key] = MASK
