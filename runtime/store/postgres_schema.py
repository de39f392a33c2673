"""The PostgreSQL store's schema: its migrations, step for step with the SQLite store's
(`sqlite.py`). `postgres.PostgresStore` runs them under an advisory lock, in one transaction."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from skillc.runtime.store.base import SCHEMA_VERSION

if TYPE_CHECKING:
    import psycopg


def _ddl(conn: psycopg.Connection[Any], sql: str) -> None:
    for statement in sql.split(";"):
        if statement.strip():
            conn.execute(statement)


def _v1(conn: psycopg.Connection[Any]) -> None:
    _ddl(conn, """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, doc TEXT NOT NULL, updated DOUBLE PRECISION);
        CREATE TABLE tasks (id TEXT NOT NULL, session TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (session, id));
        CREATE TABLE evidence (id TEXT NOT NULL, session TEXT NOT NULL, seq INTEGER NOT NULL,
                               status TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (session, id));
        CREATE INDEX evidence_status ON evidence (session, status)
    """)


def _v2(conn: psycopg.Connection[Any]) -> None:
    """Schema 2 as in SQLite: versions, append-only history, replies, leases (no v1 documents to
    split: PostgreSQL stores start at schema 2's code)."""
    _ddl(conn, """
        ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE tasks ADD COLUMN n INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE tasks ADD COLUMN state TEXT NOT NULL DEFAULT 'RUNNING';
        CREATE TABLE messages (session TEXT NOT NULL, seq INTEGER NOT NULL, doc TEXT NOT NULL,
                               client_id TEXT, PRIMARY KEY (session, seq));
        CREATE TABLE entities (session TEXT NOT NULL, seq INTEGER NOT NULL, doc TEXT NOT NULL,
                               PRIMARY KEY (session, seq));
        CREATE TABLE replies (session TEXT NOT NULL, turn INTEGER NOT NULL, delivered INTEGER NOT NULL,
                              doc TEXT NOT NULL, PRIMARY KEY (session, turn));
        CREATE TABLE leases (session TEXT PRIMARY KEY, holder TEXT NOT NULL, expires DOUBLE PRECISION NOT NULL);
        CREATE INDEX evidence_seq ON evidence (session, seq);
        CREATE INDEX tasks_n ON tasks (session, n)
    """)


def _v3(conn: psycopg.Connection[Any]) -> None:
    """Each session's audit chain head (trace.py), as in SQLite."""
    conn.execute("CREATE TABLE trace_heads (session TEXT PRIMARY KEY, head TEXT NOT NULL)")


def _v4(conn: psycopg.Connection[Any]) -> None:
    """Signed requests' nonces (serve's replay check), shared by every worker, as in SQLite."""
    _ddl(conn, """
        CREATE TABLE nonces (nonce TEXT PRIMARY KEY, seen DOUBLE PRECISION NOT NULL);
        CREATE INDEX nonces_seen ON nonces (seen)
    """)


def _v5(conn: psycopg.Connection[Any]) -> None:
    """Fencing tokens, as in SQLite: each lease grant takes the next number of one sequence."""
    _ddl(conn, """
        ALTER TABLE leases ADD COLUMN fence BIGINT NOT NULL DEFAULT 0;
        CREATE SEQUENCE lease_fence
    """)


def _v6(conn: psycopg.Connection[Any]) -> None:
    """The audit chain head and the turn whose reply was handed over become columns of the
    session row, as in SQLite (a release writes both with the lease, one statement). Lease rows
    and the `lease_fence` sequence stay as they are: a grant here is one flight already."""
    _ddl(conn, """
        ALTER TABLE sessions ADD COLUMN head TEXT;
        ALTER TABLE sessions ADD COLUMN delivered INTEGER NOT NULL DEFAULT 0;
        UPDATE sessions SET head = h.head FROM trace_heads AS h WHERE h.session = sessions.id;
        DROP TABLE trace_heads
    """)


def _v7(conn: psycopg.Connection[Any]) -> None:
    """The session row carries its open active task's document, as in SQLite."""
    conn.execute("ALTER TABLE sessions ADD COLUMN task TEXT")


# Index i migrates schema version i -> i+1, step for step with the SQLite store.
MIGRATIONS: tuple[Callable[[psycopg.Connection[Any]], None], ...] = (_v1, _v2, _v3, _v4, _v5, _v6, _v7)
assert len(MIGRATIONS) == SCHEMA_VERSION, "a schema change needs its PostgreSQL migration too"
