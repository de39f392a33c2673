"""The throw-away PostgreSQL cluster the store tests run on (tests/pg_cluster.py)."""
from __future__ import annotations

import os

import pytest

import pg_cluster
from pg_cluster import Cluster, postgres_cluster, store_backend  # noqa: F401  (fixtures)


def test_fresh_databases_are_separate_and_server_is_not_root(postgres_cluster: Cluster) -> None:
    """Two databases from one cluster share nothing; the server process never runs as root."""
    psycopg = pytest.importorskip("psycopg")
    first, second = postgres_cluster.new_database(), postgres_cluster.new_database()
    assert first != second
    with psycopg.connect(first, autocommit=True) as conn:
        conn.execute("CREATE TABLE only_here (x int)")
        if not os.environ.get("SKILLC_TEST_POSTGRES_URL"):
            pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            with open(f"/proc/{pid}/status") as status:  # a local backend: check its real uid
                uid = next(int(line.split()[1]) for line in status if line.startswith("Uid:"))
            assert uid != 0
    with psycopg.connect(second) as conn:
        assert conn.execute("SELECT to_regclass('only_here')").fetchone()[0] is None


def test_tcp_and_socket_reach_the_same_server(postgres_cluster: Cluster) -> None:
    """The loopback TCP URL and the unix-socket URL name one server."""
    psycopg = pytest.importorskip("psycopg")
    if os.environ.get("SKILLC_TEST_POSTGRES_URL"):
        pytest.skip("external server: only its own URL is known")
    with psycopg.connect(postgres_cluster.url(tcp=True)) as a, psycopg.connect(postgres_cluster.url()) as b:
        assert a.execute("SELECT system_identifier FROM pg_control_system()").fetchone() == \
            b.execute("SELECT system_identifier FROM pg_control_system()").fetchone()


def test_absent_postgres_is_a_skip_with_reason_or_a_failure_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    """No initdb anywhere: PostgresUnavailable names why; require_cluster skips, or fails if required."""
    monkeypatch.delenv("SKILLC_TEST_POSTGRES_URL", raising=False)
    monkeypatch.setattr(pg_cluster, "find_bindir", lambda: None)
    monkeypatch.setattr(pg_cluster, "_shared", None)
    monkeypatch.setattr(pg_cluster, "_shared_error", None)
    with pytest.raises(pg_cluster.PostgresUnavailable, match="not installed"):
        pg_cluster.start_cluster()
    monkeypatch.delenv("SKILLC_REQUIRE_POSTGRES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        pg_cluster.require_cluster()
    monkeypatch.setenv("SKILLC_REQUIRE_POSTGRES", "1")
    with pytest.raises(pytest.fail.Exception, match="SKILLC_REQUIRE_POSTGRES"):
        pg_cluster.require_cluster()


def test_query_and_execute_reach_either_backend(store_backend: str) -> None:
    """The helpers tests use to read or damage a store's rows work on a SQLite file and on a URL."""
    if not store_backend.startswith("postgresql://"):
        assert pg_cluster.query(store_backend, "SELECT 1") == []  # no file yet: nothing, not an error
    pg_cluster.execute(store_backend, "CREATE TABLE probe (x INTEGER)")
    pg_cluster.execute(store_backend, "INSERT INTO probe VALUES (41)")
    assert pg_cluster.query(store_backend, "SELECT x + 1 FROM probe") == [(42,)]
