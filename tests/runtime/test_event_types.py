"""The typed events (runtime/words/event_types.py): one TypedDict per `EventName`, the reference's
table of events (docs/reference/scenarios.md) lists exactly their fields, and the union refuses an
event with an undeclared key or a field of the wrong type (tests/helpers/trace_events.py, the check
every scenario's trace goes through in tests/test_scenarios.py)."""
from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import skillc.runtime
from helpers.trace_events import problems
from skillc.runtime.words.event_types import EVENT_TYPES, STAMPS, TraceEvent, as_event
from skillc.runtime.words.events import EventName

ROOT = Path(skillc.runtime.__file__).parent.parent
REFERENCE = ROOT / "docs" / "reference" / "scenarios.md"
HEADER = "| type | fields (`?`: not always there) | what they hold |"


def _table() -> dict[str, str]:
    text = REFERENCE.read_text(encoding="utf-8")
    table = text[text.index(HEADER):]
    table = table[:table.index("\n\n")]
    rows = re.findall(r"^\| `([a-z.]+)` \| `([^`]*)` \|", table, re.M)
    assert len(rows) == len(table.splitlines()) - 2, "a row of the table is not `type` | `fields` | …"
    assert len(rows) == len({name for name, _ in rows})
    return dict(rows)


def _fields(name: EventName) -> str:
    """The event's fields as the table spells them: declaration order, `?` when not required,
    the writer's stamps (and `type`) left out."""
    td = EVENT_TYPES[name]
    keys = [k for k in typing.get_type_hints(td) if k not in STAMPS and k != "type"]
    keys.sort(key=lambda k: k != "node")  # `node` first, as the trace writes it
    return ", ".join(k if k in td.__required_keys__ else f"{k}?" for k in keys)


def test_every_event_name_has_its_typed_dict_and_the_union_holds_each_once() -> None:
    assert set(EVENT_TYPES) == set(EventName)
    members = typing.get_args(TraceEvent)
    assert sorted(m.__name__ for m in members) == sorted(t.__name__ for t in EVENT_TYPES.values())
    for name, td in EVENT_TYPES.items():
        assert typing.get_type_hints(td)["type"] == typing.Literal[name]


def test_the_reference_table_lists_each_events_fields() -> None:
    table = _table()
    assert sorted(table) == sorted(name.value for name in EventName)
    wrong = {name.value: (table[name.value], _fields(name)) for name in EventName if table[name.value] != _fields(name)}
    assert not wrong, "docs/reference/scenarios.md (table, TypedDict): " + repr(wrong)


GOOD = {"seq": 3, "type": EventName.WRITE_SETTLED, "session": "s1", "turn": 1, "task": "t1", "node": "n1",
        "evidence": "e1", "tool": "ledger_post", "status": "SUCCESS", "via": "call"}


def test_a_well_formed_event_passes() -> None:
    assert problems([GOOD]) == []
    assert problems([{k: v for k, v in GOOD.items() if k != "task"}]) == []  # task only where it applies


def test_an_undeclared_key_a_wrong_type_or_a_missing_field_fails() -> None:
    assert problems([{**GOOD, "extra": 1}])  # no key the TypedDict does not declare
    assert problems([{**GOOD, "turn": "1"}])  # strict: no coercion
    assert problems([{**GOOD, "status": "MAYBE"}])  # an EvidenceStatus word
    assert problems([{**GOOD, "via": "guess"}])  # one of the Literal's
    assert problems([{k: v for k, v in GOOD.items() if k != "evidence"}])  # required
    assert problems([{k: v for k, v in GOOD.items() if k != "seq"}])  # stamped on every event
    assert problems([{**GOOD, "type": "write.unsettled"}])  # no such event


def test_a_line_read_back_is_an_event_only_with_a_known_type() -> None:
    line = json_roundtrip(GOOD)
    assert as_event(line) is line  # the same dict: nothing is copied or converted
    assert as_event({**GOOD, "type": "write.unsettled"}) is None  # a type this version does not know
    assert as_event({**GOOD, "type": ["write.settled"]}) is None  # not a type at all (nor hashable)
    assert as_event({k: v for k, v in GOOD.items() if k != "type"}) is None
    assert as_event([GOOD]) is None and as_event("write.settled") is None


def json_roundtrip(event: dict[str, object]) -> object:
    return json.loads(json.dumps(event))
