"""runtime/text/border.py: hostile values are refused with the reason and where, repaired for display."""
from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.runtime.text import border
from skillc.runtime.text.border import Limits, Refused

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
    ('"' + "x" * 51 + '"', "string"),
    ("[" + "1," * 100 + "1]", "size"),
    ("[" * 9 + "]" * 9, "depth"),
], ids=["open", "surrogate", "deep", "digits", "not-utf8", "long", "string", "items", "depth-9"])
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


def _slow_verdict(value: Any, limits: Limits) -> bool:
    """The walk with paths alone (what `check` did before its fast path)."""
    try:
        stack: list[tuple[Any, tuple[Any, ...], int]] = [(value, (), 1)]
        if not isinstance(value, (dict, list, tuple)):
            border._check_scalar(value, (), limits)
            return True
        seen = 0
        while stack:
            v, path, depth = stack.pop()
            if depth > limits.max_depth:
                return False
            for k, sub in (v.items() if isinstance(v, dict) else enumerate(v)):
                seen += 1
                if seen > limits.max_items:
                    return False
                if isinstance(k, str):
                    border._check_scalar(k, path, limits)
                if isinstance(sub, (dict, list, tuple)):
                    stack.append((sub, path + (k,), depth + 1))
                else:
                    border._check_scalar(sub, path + (k,), limits)
    except Refused:
        return False
    return True


_hostile = st.deferred(lambda: _deep | _wide)
_wide = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10 ** 25), max_value=10 ** 25)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=60)
    | st.text(alphabet=st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010), max_size=3),
    lambda inner: st.lists(inner, max_size=12) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=55), inner, max_size=6),
    max_leaves=80,
)
_deep = st.integers(min_value=5, max_value=10).flatmap(  # right around SMALL's depth limit
    lambda n: st.just(1).map(lambda leaf: _nest(leaf, n)))


def _nest(leaf: Any, n: int) -> Any:
    for i in range(n):
        leaf = [leaf] if i % 2 else {"k": leaf}
    return leaf


@settings(max_examples=400, deadline=None)
@given(_hostile)
def test_the_fast_path_lets_in_exactly_what_the_walk_with_paths_does(value: Any) -> None:
    # the fast path may only doubt (then `check` walks with paths); it never lets in more
    slow = _slow_verdict(value, SMALL)
    assert not border._acceptable(value, SMALL) or slow
    assert (border.refusal(value, SMALL) is None) is slow


def _parse_the_long_way(text: str, limits: Limits) -> Any:
    """Read by the standard library, then walked: what `parse` did before its shortcut."""
    if len(text) > limits.max_text:
        raise Refused("size", "", "long")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Refused("json", "", str(exc)) from exc
    except RecursionError as exc:
        raise Refused("depth", "", "deep") from exc
    except ValueError as exc:
        raise Refused("number", "", str(exc)) from exc
    return border.check(value, limits)


def _outcome(parse: Any, text: str) -> Any:
    try:
        return ("value", parse(text, SMALL))
    except Refused as exc:
        return ("refused", exc.reason)


@settings(max_examples=300, deadline=None)
@given(_hostile, st.booleans())
def test_parsing_text_gives_what_reading_and_walking_it_gives(value: Any, ascii_only: bool) -> None:
    # The shortcut (orjson on a text too short to pass a limit) must agree with the long way on
    # every text: lone surrogates as escapes, NaN, long integers, strings and nesting near SMALL's limits.
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert _outcome(border.parse, text) == _outcome(_parse_the_long_way, text)
