"""runtime/text/jsontext.py: orjson's speed, the standard library's values."""
from __future__ import annotations

import dataclasses
import datetime
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.runtime.text import jsontext

orjson = pytest.importorskip("orjson")

# JSON values as the standard library reads them, big integers included
SCALARS = st.none() | st.booleans() | st.integers(min_value=-(10 ** 40), max_value=10 ** 40) | \
    st.floats(allow_nan=False, allow_infinity=False) | st.text(st.characters(exclude_categories=("Cs",)))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner,
                                                                                           max_size=5), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_values_round_trip_as_the_standard_library_reads_them(value: Any) -> None:
    text = jsontext.dumps(value)
    assert json.loads(text) == value
    assert jsontext.loads(text) == value
    assert jsontext.loads(json.dumps(value)) == json.loads(json.dumps(value))


@pytest.mark.parametrize("number", [2 ** 63, 2 ** 64, -(2 ** 63) - 1, 10 ** 19, 123456789012345678901234567890])
def test_big_integers_keep_every_digit(number: int) -> None:
    # orjson alone refuses to encode past 64 bits and decodes them as floats
    assert jsontext.dumps({"id": number}) == f'{{"id":{number}}}'
    assert jsontext.loads(f'{{"id": {number}}}') == {"id": number}
    assert type(jsontext.loads(str(number))) is int
    assert jsontext.loads(f'{{"id": {number}}}'.encode()) == {"id": number}


def test_what_orjson_refuses_is_read_as_the_standard_library_reads_it() -> None:
    assert jsontext.loads('{"a": "\\ud800"}') == {"a": "\ud800"}  # the border refuses it later
    assert jsontext.loads("[NaN, 1e400]")[1] == float("inf")
    assert jsontext.dumps("\ud800") == '"\ud800"'  # not encodable: the store then refuses it


def test_not_json_is_the_standard_librarys_error_with_its_position() -> None:
    with pytest.raises(json.JSONDecodeError) as info:
        jsontext.loads('{"a": 1,}')
    assert info.value.colno == 9


def test_objects_json_cannot_hold_are_their_text() -> None:
    @dataclasses.dataclass
    class Point:
        x: int

    when = datetime.datetime(2026, 12, 1, 13, 0)
    assert jsontext.loads(jsontext.dumps({"at": when, "p": Point(1), 3: "k"})) == \
        {"at": str(when), "p": str(Point(1)), "3": "k"}
