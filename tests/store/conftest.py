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


def _postgres(tmp_path: Path) -> Callable[[], Any]:
    # A fresh database of the session's throw-away cluster (tests/pg_cluster.py); skips with the
    # reason when PostgreSQL is not installed.
    from pg_cluster import require_cluster
    from skillc.runtime.store.postgres import PostgresStore

    url = require_cluster().new_database()
    return lambda: PostgresStore(url, pool_size=4)


# name -> (tmp_path -> opener).
BACKENDS: dict[str, Callable[[Path], Callable[[], Any]]] = {"sqlite": _sqlite, "postgres": _postgres}


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
