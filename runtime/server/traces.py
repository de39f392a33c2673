"""Each session's trace as its own JSON-lines file: what GET /api/sessions/{id}/trace serves, and a
file `skillc audit verify` can check on its own (one session, one hash chain)."""
from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from skillc.runtime.text import jsontext
from skillc.runtime.words.event_types import TraceEvent
from skillc.runtime.text.idtext import ID_RULE, valid_id
from skillc.runtime.server.errors import ApiError
from skillc.runtime.telemetry.trace import FLUSH_AT, last_seq



def check_id(value: object, what: str) -> str:
    """`value` when it is an id by the one rule (idtext.valid_id: it becomes a file name, a letter
    or digit first so never "." or ".."), else ApiError INVALID_INPUT naming `what`."""
    if not valid_id(value):
        raise ApiError("INVALID_INPUT", f"{what} is {ID_RULE}")
    assert isinstance(value, str)
    return value


class TraceFiles:
    """Each session's trace as its own JSON-lines file (what GET …/trace serves)."""

    def __init__(self, root: Path, open_limit: int = 128) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self._open: OrderedDict[str, IO[str]] = OrderedDict()
        self._limit = open_limit
        self._dirty: set[str] = set()  # sessions whose file has lines not yet flushed

    def path(self, session: str) -> Path:
        """The file of one session (ids are checked by `check_id` before they get here)."""
        return self.root / f"{session}.jsonl"

    def last_seq(self) -> int:
        """The highest `seq` any session's file holds: a restarted service numbers on from it, so
        each file's `seq` keeps rising (audit verify, `Last-Event-ID` and `?after=` rely on it)."""
        return max((last_seq(str(p)) for p in self.root.glob("*.jsonl")), default=0)

    def write(self, event: TraceEvent) -> None:
        """Append one event to its session's file (buffered until `flush`, a stopping point)."""
        sid = str(event.get("session", ""))
        if not valid_id(sid):
            return
        fh = self._open.pop(sid, None)
        if fh is None:
            fh = open(self.path(sid), "a", encoding="utf-8")
            if len(self._open) >= self._limit:
                old_sid, old = self._open.popitem(last=False)
                old.close()  # closing writes its buffer
                self._dirty.discard(old_sid)
        self._open[sid] = fh
        fh.write(jsontext.dumps(event) + "\n")
        if event["type"] in FLUSH_AT:
            fh.flush()
        else:
            self._dirty.add(sid)

    def flush(self, session: str | None = None) -> None:
        """Hand buffered lines to the OS: every session's, or one's (before it is read)."""
        for sid in ([session] if session is not None else list(self._dirty)):
            fh = self._open.get(sid)
            if fh is not None and sid in self._dirty:
                fh.flush()
            self._dirty.discard(sid)

    def read(self, session: str, after: int = 0) -> Iterator[str]:
        """The session's events with seq > after, as JSON lines."""
        self.flush(session)
        try:
            fh = open(self.path(session), encoding="utf-8")
        except FileNotFoundError:
            return
        with fh:
            for line in fh:
                if after and json.loads(line).get("seq", 0) <= after:
                    continue
                yield line

    def close(self) -> None:
        """Close every open file."""
        while self._open:
            self._open.popitem()[1].close()
        self._dirty.clear()
