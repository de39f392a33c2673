"""runtime/store/rows.history_items: thousands of history rows read as one JSON array, and a
damaged row still named on its own."""
from __future__ import annotations

import pytest

from skillc.runtime.store import StoreCorrupt
from skillc.runtime.store.rows import history_items


def test_rows_read_together_give_what_rows_read_one_by_one_give() -> None:
    rows = [(i, f'{{"turn": {i}, "text": "m{i}", "big": {10 ** 30}}}') for i in range(1, 2001)]
    items = history_items(rows, "s1", "messages")
    assert items[0] == {"turn": 1, "text": "m1", "big": 10 ** 30} and len(items) == 2000
    assert history_items([], "s1", "messages") == []


@pytest.mark.parametrize("damaged", [
    ['{"a": ["x"', '"y"]}'],  # two rows that join into one object
    ['{"a": 1}, {"b": 2}', '{"c": 3}'],  # one row holding two objects
    ['{"a": 1}', '"just text"'],
    ['{"a": 1}', "{not json"],
], ids=["split-object", "two-in-one", "not-object", "not-json"])
def test_a_damaged_row_is_store_corrupt_naming_it(damaged: list[str]) -> None:
    rows = [(n, text) for n, text in enumerate(damaged, 1)]
    with pytest.raises(StoreCorrupt) as info:
        history_items(rows, "s1", "messages")
    assert "messages" in str(info.value)
