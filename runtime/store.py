"""The durable store: SQLite on disk (stdlib), JSON documents per record, schema versioned.

Sessions, tasks (with their nodes, messages, approvals and shared values), evidence and the
entity index live here, so any session resumes after a process restart. A write's evidence is
committed as STARTED before the tool is called (`commit()` is the caller's durability point).
"""
from __future__ import annotations

import json
import os
import sqlite3
from typing import Any, Callable

from skillc.runtime.state import (
    Evidence,
    SessionState,
    TaskState,
    task_from_doc,
    to_doc,
)


# One encoder for every document: json.dumps with options builds a new encoder per call.
_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str, separators=(",", ":")).encode


class StoreError(Exception):
    """The store cannot be opened or is from a newer skillc."""


def _v1(db: sqlite3.Connection) -> None:
    _script(
        db,
        """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, doc TEXT NOT NULL, updated REAL);
        CREATE TABLE tasks (id TEXT NOT NULL, session TEXT NOT NULL, doc TEXT NOT NULL,
                            PRIMARY KEY (session, id));
        CREATE TABLE evidence (id TEXT NOT NULL, session TEXT NOT NULL, seq INTEGER NOT NULL,
                               status TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (session, id));
        CREATE INDEX evidence_status ON evidence (session, status);
        """
    )


def _script(db: sqlite3.Connection, sql: str) -> None:
    # executescript() would commit on its own; a migration must stay inside its transaction.
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


# Migrations from day one: index i migrates user_version i -> i+1.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1,)
SCHEMA_VERSION = len(MIGRATIONS)


class Store:
    """One SQLite file (or ":memory:"); not shared across threads."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        path = str(path)
        if path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        try:
            self.db = sqlite3.connect(path, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {path}: {exc}") from exc
        self.path = path
        self._in_tx = False
        self._migrate()

    def _migrate(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"store {self.path} has schema {version}, newer than this skillc ({SCHEMA_VERSION})")
        for i in range(version, SCHEMA_VERSION):
            self.db.execute("BEGIN")
            MIGRATIONS[i](self.db)
            self.db.execute(f"PRAGMA user_version={i + 1}")
            self.db.execute("COMMIT")

    def _begin(self) -> None:
        if not self._in_tx:
            self.db.execute("BEGIN")
            self._in_tx = True

    def commit(self) -> None:
        """Make everything written so far durable."""
        if self._in_tx:
            self.db.execute("COMMIT")
            self._in_tx = False

    def close(self) -> None:
        """Commit and close."""
        self.commit()
        self.db.close()

    # ------------------------------------------------------------ writes

    def put_session(self, s: SessionState, now: float = 0.0) -> None:
        """Insert or replace a session document."""
        self._begin()
        self.db.execute(
            "INSERT OR REPLACE INTO sessions (id, doc, updated) VALUES (?, ?, ?)",
            (s.id, _ENCODE(to_doc(s)), now),
        )

    def put_task(self, t: TaskState) -> None:
        """Insert or replace a task document (nodes included)."""
        self._begin()
        self.db.execute(
            "INSERT OR REPLACE INTO tasks (id, session, doc) VALUES (?, ?, ?)",
            (t.id, t.session, _ENCODE(to_doc(t))),
        )

    def put_evidence(self, session: str, e: Evidence) -> None:
        """Insert or replace an evidence document."""
        self._begin()
        self.db.execute(
            "INSERT OR REPLACE INTO evidence (id, session, seq, status, doc) VALUES (?, ?, ?, ?, ?)",
            (e.id, session, e.seq, e.status, _ENCODE(to_doc(e))),
        )

    # ------------------------------------------------------------ reads

    def get_session(self, session_id: str) -> SessionState | None:
        """The session, or None."""
        row = self.db.execute("SELECT doc FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return SessionState(**json.loads(row[0])) if row else None

    def get_task(self, session_id: str, task_id: str) -> TaskState | None:
        """A task of a session, or None."""
        row = self.db.execute(
            "SELECT doc FROM tasks WHERE session = ? AND id = ?", (session_id, task_id)
        ).fetchone()
        return task_from_doc(json.loads(row[0])) if row else None

    def evidence_of(self, session_id: str) -> list[Evidence]:
        """All evidence of a session in creation order."""
        rows = self.db.execute(
            "SELECT doc FROM evidence WHERE session = ? ORDER BY seq", (session_id,)
        ).fetchall()
        return [Evidence(**json.loads(r[0])) for r in rows]

    def sessions(self) -> list[tuple[str, float]]:
        """(id, last update) of every session, newest first."""
        return [tuple(r) for r in self.db.execute("SELECT id, updated FROM sessions ORDER BY updated DESC")]

    def raw(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Read-only query for tools and tests."""
        return self.db.execute(sql, params).fetchall()
