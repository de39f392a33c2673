"""runtime/border.py: hostile values are refused with the reason and where, repaired for display."""
from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.runtime import border
from skillc.runtime.border import Limits, Refused

SMALL = Limits(max_depth=8, max_string=50, max_int_digits=20, max_items=100, max_text=2000)


@pytest.mark.parametrize("value, reason, where", [
    ({"a": "ok\ud800"}, "unicode", "$.a"),
    ({"\udfff": 1}, "unicode", "$"),
    ({"a": [1, [2, 10 ** 30]]}, "number", "$.a[1][1]"),
    ({"a": float("nan")}, "number", "$.a"),
    ({"a": "x" * 51}, "string", "$.a"),
    ([[[[[[[[[[1]]]]]]]]]], "depth", None),
    (list(range(101)), "size", "$"),
])
def test_check_refuses_with_reason_and_place(value: Any, reason: str, where: str | None) -> None:
    with pytest.raises(Refused) as info:
        border.check(value, SMALL)
    assert info.value.reason == reason
    if where is not None:
        assert info.value.where == where


def test_check_lets_ordinary_values_through_unchanged() -> None:
    value = {"名前": "Ünïcode ✓", "n": [1, 2.5, None, True, {"deep": [10 ** 19]}]}
    assert border.check(value, SMALL) is value


@pytest.mark.parametrize("text, reason", [
    ("{", "json"),
    ('{"a": "\\ud800"}', "unicode"),
    ("[" * 900 + "]" * 900, "depth"),
    ("1" * 25, "number"),
    (b'"\xff"', "unicode"),
    ("[" + "1," * 1500 + "1]", "size"),
], ids=["open", "surrogate", "deep", "digits", "not-utf8", "long"])
def test_parse_refuses_text(text: str | bytes, reason: str) -> None:
    with pytest.raises(Refused) as info:
        border.parse(text, SMALL)
    assert info.value.reason == reason


@pytest.mark.parametrize("text, reason", [
    ("[" * 5000 + "]" * 5000, "depth"), ("1" * 4301, "number"), ("{\"a\": " * 3000 + "1" + "}" * 3000, "depth"),
], ids=["deep-5000", "digits-4301", "objects-3000"])
def test_parse_refuses_what_breaks_python_json(text: str, reason: str) -> None:
    with pytest.raises(Refused) as info:
        border.parse(text)
    assert info.value.reason == reason


def test_clean_gives_a_value_that_encodes() -> None:
    bad = {"s": "a\ud800b", "n": 10 ** 5000, "f": float("inf"), "d": [[[[[[[[[[[1]]]]]]]]]]]}
    out = border.clean(bad, SMALL)
    text = json.dumps(out, ensure_ascii=False, allow_nan=False)
    text.encode("utf-8")
    assert out["s"] == "a\ufffdb" and "digits" in out["n"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0xFFFF)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_whatever_passes_the_border_can_be_stored(value: Any) -> None:
    """The border's promise: a value it lets in encodes as strict JSON in UTF-8; one it refuses
    is cleaned into one that does."""
    try:
        ok = border.check(value, SMALL)
    except Refused:
        ok = border.clean(value, SMALL)
    json.dumps(ok, ensure_ascii=False, allow_nan=False).encode("utf-8")
