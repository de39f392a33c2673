"""The CLI renderer (cli/render.py) has one handler per event type, keyed by `EventName`: every
type has a handler or is listed as silent, never both, and an event read back from a trace file
(its `type` a plain string) reaches the same handler."""
from __future__ import annotations

import json

from skillc.render import HANDLERS, SILENT, Renderer
from skillc.runtime.text import jsontext
from skillc.runtime.words.events import EventName


def test_every_event_type_has_a_handler_or_is_silent() -> None:
    assert all(isinstance(name, EventName) for name in HANDLERS)
    assert not set(HANDLERS) & SILENT
    assert set(HANDLERS) | SILENT == set(EventName)


def test_an_event_read_back_from_a_file_is_rendered_as_the_live_one() -> None:
    live = {"seq": 9, "type": EventName.TURN_REPLY, "session": "s1", "turn": 1, "text": "done", "suspended": False}
    read_back = json.loads(jsontext.dumps(live))
    assert type(read_back["type"]) is str
    shown: list[list[str]] = []
    for ev in (live, read_back):
        lines: list[str] = []
        Renderer(lines.append).event(ev)
        shown.append(lines)
    assert shown[0] == shown[1] == ["  agent: done"]


def test_a_silent_or_unknown_type_prints_nothing() -> None:
    lines: list[str] = []
    r = Renderer(lines.append, verbose=True)
    r.event({"seq": 1, "type": EventName.MCP_INVOKED, "session": "s1", "turn": 1, "tool": "t", "args": {}})
    r.event({"seq": 2, "type": "something.new", "session": "s1", "turn": 1})
    assert lines == []
