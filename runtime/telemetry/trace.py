"""The trace: every step of a run as JSON-lines events (docs/reference/scenarios.md), one writer.

The trace is the audit log, the scenario runner's input and the demo's transcript. Events get a
run-wide `seq`; callers give the event (a `TraceEvent`: its `type`, `node` where it has one, its
fields) with its `session`, `turn` and, where it applies, `task` (`SessionEnv.emit` does, for every
event of a session).

- **Streaming**: the writer sends each event to its listeners and keeps nothing, unless built with
  `keep=True` (tests, the scenario runner): a serving process never grows with history.
- **Batched file writes**: lines for the file are buffered and written at stopping points
  (`flush()`: before every unit of work commits — so the chain head a unit stores is on disk — and
  at the end of every turn), when a call reaches the outside world (`FLUSH_AT`), or when the
  buffer holds `FLUSH_EVERY` lines. A kill -9 loses at most
  the events after the last committed unit, which describe nothing the store kept. Sinks that
  write per-session files (the service's) register their own flush in `flushers`.
- **Per-session context**: `TraceWriter.enter(env)` names the session whose turn runs in the
  current asyncio task (a context variable), so callbacks that arrive from elsewhere (an MCP
  client hook, telemetry) find their own session; concurrent sessions never mix.
- **Observers**: the telemetry installed on this writer's runtime (`observers`, empty unless
  `open_runtime` / `create_app` installed one from configuration); the writer itself never looks
  at the environment to switch telemetry on.
- **Hash chain** (`telemetry/audit.py`): each event carries `prev`, the digest of its
  session's previous event (the first one: the session's anchor), and `hash`, its own digest.
  A session reopened by another process continues its chain from the head the store kept
  (`continue_chain`, called by runtime/durable.py); with `append=True` the new process adds to
  the same file after its last `seq`, so the file verifies as one chain across the restart.
  An event that reaches nobody (a writer with no file, kept list, listener, sink or observer:
  an embedded `Runtime` whose trace nobody asked for) is not sealed and does not move the head:
  there is nothing to verify, and a head stored for it would name an event no file holds, so a
  later writer's first `prev` would point at nothing. It was also ~8 % of an in-process turn.
- **Audit events**: an approval asked or decided and a write settled are followed by
  `audit.approval` / `audit.settlement` with who, what (digests) and when: the session builds
  them (`telemetry/audit.py` `follow`, with the facts it holds) and emits them here.
"""
from __future__ import annotations

import contextvars
import json
import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, Protocol

from skillc.runtime.words.events import EventName
from skillc.runtime.words.event_types import TraceEvent
from skillc.runtime.telemetry.audit import AuditChain
from skillc.runtime.text import jsontext

FLUSH_EVERY = 256  # buffered trace lines at most between stopping points
# A call reaching the outside world is written at once: after a crash mid-call the file still
# says the tool was invoked (the unit before it committed the write as STARTED).
FLUSH_AT = frozenset({EventName.MCP_INVOKED})

Listener = Callable[[TraceEvent], None]

# The session (its `SessionEnv`) whose turn runs in this asyncio task; None outside turns.
_ENV: contextvars.ContextVar[Any] = contextvars.ContextVar("skillc_trace_env", default=None)


class Observer(Protocol):
    """Telemetry of the writer's runtime (`telemetry.core.Telemetry`): sees each event once written."""

    def event(self, event: TraceEvent) -> None:
        """One event, after it is written."""


def current_env() -> Any:
    """The session whose turn runs in this task (set by `TraceWriter.enter`), or None."""
    return _ENV.get()


class TraceWriter:
    """Streams events to a file and listeners, chains them per session; keeps them only if asked.

    `keep=True` keeps every event in `events` (tests, the scenario runner). `chain=False` leaves
    out `prev`/`hash`; `key` (bytes) makes the chain's digests HMACs (none: plain
    SHA-256; `config.audit_key()` reads `SKILLC_AUDIT_KEY` for the callers that open a runtime). `audit=False` leaves out the
    audit events. `append=True` adds to an existing file, numbering on from its last `seq`
    (else the file is started anew); `seq_from` numbers on from a `seq` the caller knows was
    already used (a service restarted over its per-session trace files). `observers` see every
    event once written (telemetry; `Telemetry.install` adds itself).
    """

    def __init__(self, path: str | None = None, *, keep: bool = False, chain: bool = True,
                 key: bytes | None = None, audit: bool = True, append: bool = False,
                 seq_from: int = 0, observers: Iterable[Observer] = ()) -> None:
        self._events: list[TraceEvent] | None = [] if keep else None
        self._seq = max(seq_from, last_seq(path) if path and append else 0)
        self._fh: IO[str] | None = open(path, "a" if append else "w", encoding="utf-8") if path else None
        if path and self._fh is not None and append and self._fh.tell() > 0 and not _ends_with_newline(path):
            self._fh.write("\n")  # a line cut short by a crash stays its own (unreadable) line
        self._lines: list[str] = []  # written to the file at the next flush()
        self.listeners: list[Listener] = []
        self.flushers: list[Callable[[], None]] = []  # sinks with buffers of their own (server trace files)
        self.chain: AuditChain | None = AuditChain(key) if chain else None
        self.audit = audit  # read by the session: whether it emits the audit events
        self.observers: list[Observer] = list(observers)  # telemetry (Telemetry.install)

    @property
    def events(self) -> list[TraceEvent]:
        """Every event so far; only for a writer built with `keep=True`."""
        if self._events is None:
            raise RuntimeError("this TraceWriter streams and keeps no events: build it with keep=True "
                               "to read `events`, or add a listener")
        return self._events

    def received(self) -> bool:
        """Whether an event emitted now reaches anyone: the file, the kept list, a listener, a
        sink's flush or an observer. An event nobody receives is not sealed (see the module's
        docstring: the hash chain)."""
        return bool(self._fh or self._events is not None or self.listeners or self.flushers or self.observers)

    def add_listener(self, listener: Listener) -> None:
        """Call `listener(event)` for every event from now on (after it is written)."""
        self.listeners.append(listener)

    def chain_head(self, session: str) -> str | None:
        """The hash of the session's latest event from this writer (or the head it continued
        from), None when it has none or writes no chain."""
        return self.chain.heads.get(session) if self.chain is not None else None

    def continue_chain(self, session: str, head: str) -> bool:
        """Continue the session's chain from `head` (its latest event, written by an earlier
        process) when this writer has not chained an event of it yet; True when it now does."""
        if self.chain is None or session in self.chain.heads:
            return False
        self.chain.heads[session] = head
        return True

    def enter(self, env: Any) -> None:
        """Mark `env` (a session) as the one whose turn runs in this task, until the next `enter`."""
        _ENV.set(env)

    def emit(self, event: TraceEvent, *, session: str, turn: int, task: str | None = None) -> TraceEvent:
        """Record one event (its producer's fields, `type` first), stamped: `seq`, `session`,
        `turn` and `task` when given go in before its own fields; a `node` of None is left out.
        Returns the event as written."""
        self._seq += 1
        written: Any = {"seq": self._seq, "type": event["type"], "session": session, "turn": turn}
        if task is not None:
            written["task"] = task
        written.update(event)  # `type` keeps its place; `node` comes first of the event's own
        if "node" in written and written["node"] is None:
            del written["node"]
        if self.chain is not None and self.received():
            self.chain.seal(written)
        if self._events is not None:
            self._events.append(written)
        if self._fh:
            self._lines.append(jsontext.dumps(written))
            if len(self._lines) >= FLUSH_EVERY or event["type"] in FLUSH_AT:
                self._write_lines()
        for listener in self.listeners:
            listener(written)
        for observer in self.observers:
            observer.event(written)
        typed: TraceEvent = written
        return typed

    def flush(self) -> None:
        """A stopping point: every event so far reaches the file (and every registered sink's)."""
        if self._lines:
            self._write_lines()
        for flush in self.flushers:
            flush()

    def _write_lines(self) -> None:
        if self._fh is not None:
            self._fh.write("\n".join(self._lines) + "\n")
            self._fh.flush()
        self._lines.clear()

    def close(self) -> None:
        """Write what is buffered and close the file, if any."""
        self.flush()
        if self._fh:
            self._fh.close()
            self._fh = None


def _ends_with_newline(path: str) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def last_seq(path: str) -> int:
    """The `seq` of the last readable event of an existing trace file (0 when none): read from
    the end, so opening a long log to append costs about one block."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        return 0
    with fh:
        end = fh.seek(0, os.SEEK_END)
        block, tail = 65536, b""
        while end > 0:
            start = max(0, end - block)
            fh.seek(start)
            tail = fh.read(end - start) + tail
            lines = tail.split(b"\n")
            # the first piece may be cut short (unless the block reached the file's start)
            for line in reversed(lines if start == 0 else lines[1:]):
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict) and isinstance(event.get("seq"), int):
                    return int(event["seq"])
            end = start
            tail = lines[0] if start > 0 else b""
    return 0


def iter_events(path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, event) for each non-blank line of a JSON-lines trace; raises ValueError on a
    line that is not a JSON object."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            event = json.loads(line)
            if not isinstance(event, dict):
                raise ValueError(f"line {lineno}: not a JSON object")
            yield lineno, event
