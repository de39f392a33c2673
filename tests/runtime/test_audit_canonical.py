"""The audit chain's canonical bytes (runtime/telemetry/audit.canonical) are exactly
`json.dumps(sort_keys, ensure_ascii, compact, default=str)`: the encoder is built once for speed,
and every trace file ever sealed must still verify."""
from __future__ import annotations

import json
from datetime import date
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.runtime.telemetry.audit import AuditChain, canonical

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text()
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                       max_leaves=20)


def _reference(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str).encode("ascii")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(), _VALUES, max_size=6))
def test_canonical_bytes_are_those_of_json_dumps(event: dict[str, Any]) -> None:
    assert canonical(event) == _reference(event)


def test_canonical_of_odd_values() -> None:
    for value in ({"b": 1, "a": [1.5, "é\ud800", None]}, {"d": date(2026, 12, 2)}, {1: "x", 2: "y"}, [3, {"z": 1, "a": 2}],
                  "text", 1.0e300, {"k": float("inf")}):
        assert canonical(value) == _reference(value), value
    mixed = {1: "x", "a": "y"}  # keys that cannot be sorted together: compared as JSON shows them
    assert canonical(mixed) == b'{"1":"x","a":"y"}'


def test_a_sealed_event_verifies_the_same_way() -> None:
    chain = AuditChain()
    event: dict[str, Any] = {"seq": 1, "type": "turn.started", "session": "s1", "text": "héllo"}
    chain.seal(event)
    assert event["hash"] == chain.event_hash(event) == chain.digest(_reference({k: v for k, v in event.items() if k != "hash"}))
