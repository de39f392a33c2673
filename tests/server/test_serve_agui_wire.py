"""The AG-UI events skillc writes without a model object are the package's events, byte for byte:
every event of an approval round trip (refused digest, confirm) is read back with `ag_ui.core`'s
models and encoded again by the package's `EventEncoder`, and the two texts must be equal."""
from __future__ import annotations

import json
from typing import Any

from ag_ui.core import CustomEvent, Event, EventType, StepStartedEvent
from ag_ui.encoder import EventEncoder
from pydantic import TypeAdapter

from skillc.runtime.server.agui_wire import encode

from serve_harness import Client
from test_serve_agui import approval_script, call, resume

_EVENT: TypeAdapter[Any] = TypeAdapter(Event)
_ENCODER = EventEncoder()


def package_encoding(raw: str) -> str:
    """What the package itself sends for the event this text holds (validated by its model)."""
    return _ENCODER.encode(_EVENT.validate_json(raw))


def test_every_event_of_an_approval_round_trip_is_the_packages_encoding(alice: Client, model: Any) -> None:
    model.add(*approval_script("Wire check"))
    first = alice.run("wire", "wire-1", "Please create an article titled Wire check")
    interrupt = first.interrupt
    wrong = alice.run("wire", "wire-2", resume=resume(interrupt, {"decision": "CONFIRM", "digest": "hmac-sha256:00"}))
    model.add(call("builtin_node_finish", output="Created article 18"))
    done = alice.run("wire", "wire-3", resume=resume(interrupt, {"decision": "CONFIRM",
                                                                 "digest": interrupt["metadata"]["digest"]}))
    raws = first.raw + wrong.raw + done.raw
    for raw in raws:
        assert package_encoding(raw) == f"data: {raw}\n\n"
    kinds = {json.loads(raw)["type"] for raw in raws}
    assert kinds >= {"RUN_STARTED", "STEP_STARTED", "STEP_FINISHED", "TOOL_CALL_START", "TOOL_CALL_ARGS",
                     "TOOL_CALL_END", "TOOL_CALL_RESULT", "CUSTOM", "STATE_SNAPSHOT", "TEXT_MESSAGE_START",
                     "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED", "RUN_ERROR"}, kinds
    customs = {e["name"] for e in first.of("CUSTOM") + done.of("CUSTOM")}
    assert {"skillc.progress", "skillc.verdict", "skillc.approval", "skillc.write_settled"} <= customs
    assert any("metadata" in e for e in done.of("STEP_STARTED"))  # the metadata field's place is checked too


def test_values_are_encoded_as_the_package_encodes_them() -> None:
    value = {"text": "é ✓ \u2028 \"quoted\" \\", "big": 2 ** 70, "float": 0.1, "nested": [[{}], None, True]}
    ours = encode(EventType.CUSTOM, {"name": "skillc.x", "value": value})
    stamp = json.loads(ours)["timestamp"]
    assert ours == CustomEvent(name="skillc.x", value=value, timestamp=stamp).model_dump_json(by_alias=True)
    # the one known difference: an exponent is written 1e-7 here, 1e-07 by the package (the same number)
    tiny = encode(EventType.CUSTOM, {"name": "skillc.x", "value": {"tiny": -1.5e-7}})
    assert json.loads(tiny)["value"] == {"tiny": -1.5e-7} and "-1.5e-7" in tiny
    step = encode(EventType.STEP_STARTED, {"stepName": "n1"}, {"skill": "s"})
    stamp = json.loads(step)["timestamp"]
    assert step == StepStartedEvent(step_name="n1", metadata={"skill": "s"}, timestamp=stamp).model_dump_json(by_alias=True)


def test_a_snapshot_written_from_its_json_text_is_the_packages_encoding() -> None:
    from ag_ui.core import StateSnapshotEvent

    from skillc.runtime.server.agui_wire import encode_with_raw
    from skillc.runtime.text import jsontext

    state = {"session": "s1", "turn": 2, "values": {"é": [1, 2.5, None]}, "pending": None, "big": 2 ** 70}
    ours = encode_with_raw(EventType.STATE_SNAPSHOT, {}, "snapshot", jsontext.dumps(state))
    stamp = json.loads(ours)["timestamp"]
    assert ours == StateSnapshotEvent(snapshot=state, timestamp=stamp).model_dump_json(by_alias=True)
    assert package_encoding(ours) == f"data: {ours}\n\n"
