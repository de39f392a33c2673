"""Durable state: the store interface (`base`), the SQLite default (`sqlite`) and `open_store`.

`from skillc.runtime.store import Store` keeps working: `Store(path)` opens a SQLite store.
"""
from __future__ import annotations

import os
from typing import Any

from skillc.runtime.store.base import (
    SCHEMA_VERSION,
    Lease,
    LeaseLost,
    ReplyRecord,
    StoreConflict,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
    UnitOfWork,
    new_holder,
)
from skillc.runtime.store.base import Store as StoreProtocol
from skillc.runtime.store.sqlite import SQLiteStore

Store = SQLiteStore  # the embedded default, under its historical name

__all__ = ["SCHEMA_VERSION", "Lease", "LeaseLost", "ReplyRecord", "SQLiteStore", "Store", "StoreConflict",
           "StoreCorrupt", "StoreError", "StoreProtocol", "StoreUnavailable", "UnitOfWork", "new_holder", "open_store"]


def open_store(target: str | os.PathLike[str], **options: Any) -> StoreProtocol:
    """A store for a path (SQLite) or a postgresql:// URL (PostgreSQL, the `postgres` extra)."""
    text = str(target)
    if text.startswith(("postgresql://", "postgres://")):
        from skillc.runtime.store.postgres import PostgresStore

        return PostgresStore(text, **options)
    return SQLiteStore(text, **options)
