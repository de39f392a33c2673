"""Trace event types are spelled once (runtime/words/events.py): no runtime or CLI module spells one
as a bare string, and a vocab word keeps a trace line byte-identical to the plain string's (the
reference's table of events and their fields: tests/runtime/test_event_types.py)."""
from __future__ import annotations

import re
from pathlib import Path

import skillc.runtime
from skillc.runtime.text import jsontext
from skillc.runtime.words.events import EventName

ROOT = Path(skillc.runtime.__file__).parent.parent
SPELLED = re.compile(r"""["'](%s)["']""" % "|".join(re.escape(name.value) for name in EventName if name != "error"))


def test_no_module_spells_an_event_type() -> None:
    spelled = []
    for folder in ("runtime", "cli"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ROOT / "runtime" / "words" / "events.py":
                continue
            for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0]
                if SPELLED.search(code) and not code.lstrip().startswith(("skillc ", "jq ")):
                    spelled.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}")
    # docstrings and examples may name an event; code names it through EventName
    spelled = [s for s in spelled if "select(.type" not in s]
    assert not spelled, "\n".join(spelled)


def test_a_word_writes_the_same_trace_line() -> None:
    event = {"seq": 1, "type": EventName.TOOL_CALL, "session": "s1", "turn": 1}
    assert jsontext.dumps(event) == jsontext.dumps({**event, "type": "tool.call"})
    assert EventName.TOOL_CALL == "tool.call" and "tool.call" in frozenset({EventName.TOOL_CALL})
