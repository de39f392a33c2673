"""`each_values`, the fast read of a `[]` argument generated checks use, gives what reading the
path with `get_path` item by item gives, for every item shape a model can send."""
from __future__ import annotations

from typing import Any

import pytest

from skillc.runtime.compiled.paths import MISSING, each_values, get_path, has_value, parse_path, split_each


def by_get_path(args: dict, parts: tuple) -> list[Any] | None:
    """The reading spelled out with get_path only (the generic way)."""
    split = split_each(parts)
    assert split is not None
    before, after = split
    items = get_path(args, before)
    if not isinstance(items, list) or not items:
        return None
    values = [get_path(item, after) if after else item for item in items]
    return [v if has_value(v) else MISSING for v in values]


ITEMS = [[{"sku": "A1"}, {"sku": "B2"}], [{"sku": "A1"}, {}], [{"sku": None}, {"sku": ""}],
         [[{"sku": "X"}, {"sku": "Y"}]], ["plain", 3], [], None, "not a list", [{"sku": {"deep": 1}}]]


@pytest.mark.parametrize("items", ITEMS)
@pytest.mark.parametrize("path", ["lines[].sku", "lines[]", "order.lines[].sku", "lines[].sku.deep"])
def test_each_values_reads_as_get_path_does(items: Any, path: str) -> None:
    parts = parse_path(path)
    args = {"lines": items, "order": {"lines": items}}
    before, after = split_each(parts) or ((), ())
    assert each_values(args, before, after) == by_get_path(args, parts)
    assert each_values({}, before, after) is None
