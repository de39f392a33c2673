"""Backends the store tests run on: each test takes `store_factory` and runs once per backend.

`store_factory()` opens a new connection to the test's own database (call it twice to act as two
processes); every store opened is closed at the end. A backend is one entry of BACKENDS: a
function from the test's tmp_path to a zero-argument opener.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.store import SQLiteStore


def _sqlite(tmp_path: Path) -> Callable[[], Any]:
    path = tmp_path / "store.sqlite"
    return lambda: SQLiteStore(path)


# name -> (tmp_path -> opener). The postgres backend adds itself here.
BACKENDS: dict[str, Callable[[Path], Callable[[], Any]]] = {"sqlite": _sqlite}


@pytest.fixture(params=sorted(BACKENDS))
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Any]]:
    """Opens stores on one fresh database of the parametrized backend."""
    opener = BACKENDS[request.param](tmp_path)
    opened: list[Any] = []

    def factory() -> Any:
        store = opener()
        opened.append(store)
        return store

    yield factory
    for store in opened:
        try:
            store.close()
        except Exception:  # already closed by the test, or its database broken on purpose
            pass
