"""A throw-away PostgreSQL cluster for tests: one per test session, a fresh database per test.

`shared_cluster()` starts (once per process) a cluster in a new temp directory with `initdb` and
`pg_ctl`, listening on a unix socket in that directory and on a free loopback port; it is stopped
(`pg_ctl stop -m immediate`) and its directory removed at the end of the pytest session (or at
interpreter exit for scripts such as bench/). `cluster.new_database()` gives each test its own
empty database, so tests never see each other's rows.

Running as root (CI does): `initdb` refuses root, so the server runs as an unprivileged account
(`postgres` when it exists, else `nobody`) through `runuser`/`setpriv`, in a temp directory under
the system temp dir chowned to it. Nothing is written to the checkout or to ../shared.

PostgreSQL absent (no `initdb`/`pg_ctl` on PATH or under /usr/lib/postgresql/*/bin, or psycopg not
installed): `require_cluster()` skips with the reason, unless SKILLC_REQUIRE_POSTGRES=1, which
turns the absence into a failure (for CI machines that must run these tests). Present but broken
(initdb or start fails): always an error with the server's log, never a skip.
SKILLC_TEST_POSTGRES_URL=postgresql://… uses an existing server instead (a superuser URL: tests
create databases).

Durability settings: `synchronous_commit=on` (PostgreSQL's default), so a COMMIT that returned is
in the WAL the server has written: a server stopped with `pg_ctl stop -m immediate` or restarted
(the crash and restart tests do both) keeps every committed row, as a production server does.
`synchronous_commit=off` would lose the last commits on such a stop and make those tests prove
nothing. Speed settings kept: `fsync=off` and `full_page_writes=off` matter only if the
*operating system* crashes (the written WAL is in its cache); the tests stop server and client
processes, never the machine.
"""
from __future__ import annotations

import atexit
import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

SUPERUSER = "skillc"
_START_TIMEOUT = 60  # seconds pg_ctl waits for the server (a loaded 2-core machine can be slow)


class PostgresUnavailable(Exception):
    """PostgreSQL (or psycopg) is not installed here: tests that need it are skipped with this."""


def find_bindir() -> Path | None:
    """The folder holding initdb and pg_ctl: PATH first, then Debian's /usr/lib/postgresql/N/bin."""
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(os.path.realpath(initdb)).parent
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(candidate, "initdb"), os.X_OK):
            return Path(candidate)
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> tuple[list[str], pwd.struct_passwd | None]:
    """The command prefix that drops root, and the account it drops to (None when not root)."""
    if os.geteuid() != 0:
        return [], None
    for name in ("postgres", "nobody"):
        try:
            account = pwd.getpwnam(name)
        except KeyError:
            continue
        if shutil.which("runuser"):
            return ["runuser", "-u", name, "--"], account
        if shutil.which("setpriv"):
            return ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}",
                    "--clear-groups", "--"], account
    raise PostgresUnavailable("running as root and neither runuser nor setpriv nor an unprivileged "
                              "account (postgres, nobody) is available to run PostgreSQL")


def _stop_orphans(bindir: Path, prefix: list[str]) -> None:
    """Stop clusters earlier test processes left running when they were killed (their owner pid
    is gone), so an interrupted run does not leave servers behind for ever."""
    for owner in glob.glob(os.path.join(tempfile.gettempdir(), "skillc-pg-*", "owner")):
        root = os.path.dirname(owner)
        try:
            pid = int(Path(owner).read_text().strip())
            os.kill(pid, 0)
            continue  # its test process still runs
        except ProcessLookupError:
            pass
        except (OSError, ValueError):
            continue
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", os.path.join(root, "data"), "-m", "immediate",
                        "-w", "stop"], cwd="/", capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class Cluster:
    """A running server: connection URLs for the superuser and a fresh database per caller."""

    socket_dir: str
    port: int
    _databases: itertools.count = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: list = field(default_factory=list)  # callables that stop it (empty for an external server)
    _restart: list = field(default_factory=list)  # a callable that restarts it (empty: external)
    base_url: str | None = None  # an external server's URL (SKILLC_TEST_POSTGRES_URL)

    def url(self, dbname: str = "postgres", *, tcp: bool = False) -> str:
        """A URL for `dbname`: over the unix socket (default) or over loopback TCP."""
        if self.base_url:
            head, _, _ = self.base_url.rpartition("/")
            return f"{head}/{dbname}"
        if tcp:
            return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{dbname}"
        return f"postgresql://{SUPERUSER}@/{dbname}?host={quote(self.socket_dir, safe='')}&port={self.port}"

    def new_database(self, prefix: str = "t") -> str:
        """Create an empty database and return its URL (unique within this process)."""
        import psycopg

        with self._lock:
            n = next(self._databases)
        name = f"{prefix}_{os.getpid()}_{n}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def restart(self, mode: str = "immediate") -> None:
        """Stop the server (`immediate`: as a crash would; `fast`: clients are disconnected) and
        start it again on the same port; every connection is gone, every committed row kept."""
        if not self._restart:
            import pytest

            pytest.skip("an external PostgreSQL server is not restarted by the tests")
        self._restart[0](mode)

    def stop(self) -> None:
        """Stop the server at once and remove its directory (idempotent)."""
        while self._stop:
            self._stop.pop()()


def start_cluster() -> Cluster:
    """initdb + pg_ctl start in a new temp directory; raises PostgresUnavailable when absent."""
    external = os.environ.get("SKILLC_TEST_POSTGRES_URL")
    if external:
        return Cluster(socket_dir="", port=0, base_url=external)
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise PostgresUnavailable(f"psycopg is not installed ({exc}); pip install 'skillc[postgres]'") from None
    bindir = find_bindir()
    if bindir is None:
        raise PostgresUnavailable("PostgreSQL is not installed: no initdb/pg_ctl on PATH or under "
                                  "/usr/lib/postgresql/*/bin")
    prefix, account = _run_as()
    _stop_orphans(bindir, prefix)
    # Under the system temp dir, not pytest's tmp_path: that one is 0700 root, unreadable to the
    # unprivileged server; and never inside the checkout (CI may mount it read-only).
    root = tempfile.mkdtemp(prefix="skillc-pg-")
    data = os.path.join(root, "data")
    log = os.path.join(root, "server.log")
    if account is not None:
        os.chown(root, account.pw_uid, account.pw_gid)
    os.chmod(root, 0o700)
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    port = _free_port()

    def run(*args: str) -> None:
        proc = subprocess.run([*prefix, *args], env=env, cwd=root, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = Path(log).read_text(errors="replace")[-4000:] if os.path.exists(log) else ""
            raise RuntimeError(f"{' '.join(args[:2])} failed ({proc.returncode}):\n{proc.stdout}\n"
                               f"{proc.stderr}\n{tail}")

    run(str(bindir / "initdb"), "-D", data, "-U", SUPERUSER, "--auth=trust", "--no-sync",
        "--encoding=UTF8", "--no-instructions")
    for attempt in range(3):  # the free port can be taken between probing and binding: try another
        options = " ".join([
            f"-c port={port}", "-c listen_addresses=127.0.0.1", f"-c unix_socket_directories={root}",
            "-c fsync=off", "-c synchronous_commit=on", "-c full_page_writes=off",
            "-c max_connections=200", "-c shared_buffers=32MB", "-c log_min_messages=warning",
        ])
        try:
            run(str(bindir / "pg_ctl"), "-D", data, "-l", log, "-w", "-t", str(_START_TIMEOUT), "-o", options, "start")
            break
        except RuntimeError:
            if attempt == 2 or "already in use" not in Path(log).read_text(errors="replace"):
                raise
            port = _free_port()
    with open(os.path.join(root, "owner"), "w") as owner:  # lets a later run stop it if we die
        owner.write(str(os.getpid()))
    cluster = Cluster(socket_dir=root, port=port)

    def stop() -> None:
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"],
                       env=env, cwd="/", capture_output=True)
        shutil.rmtree(root, ignore_errors=True)

    def restart(mode: str) -> None:
        run(str(bindir / "pg_ctl"), "-D", data, "-m", mode, "-w", "stop")
        run(str(bindir / "pg_ctl"), "-D", data, "-l", log, "-w", "-t", str(_START_TIMEOUT), "-o", options, "start")

    cluster._stop.append(stop)
    cluster._restart.append(restart)
    atexit.register(cluster.stop)  # scripts (bench/) and interrupted runs still stop it
    return cluster


_shared: Cluster | None = None
_shared_error: PostgresUnavailable | None = None
_shared_lock = threading.Lock()


def shared_cluster() -> Cluster:
    """The process's one cluster, started on first use; raises PostgresUnavailable when absent."""
    global _shared, _shared_error
    with _shared_lock:
        if _shared is None and _shared_error is None:
            try:
                _shared = start_cluster()
            except PostgresUnavailable as exc:
                _shared_error = exc
        if _shared_error is not None:
            raise _shared_error
        assert _shared is not None
        return _shared


def require_cluster(config: object | None = None) -> Cluster:
    """For tests: the shared cluster, or pytest.skip (pytest.fail under SKILLC_REQUIRE_POSTGRES=1).

    Given pytest's `config`, the cluster is also stopped when the test session ends.
    """
    import pytest

    try:
        cluster = shared_cluster()
    except PostgresUnavailable as exc:
        if os.environ.get("SKILLC_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"SKILLC_REQUIRE_POSTGRES=1 but {exc}")
        pytest.skip(str(exc))
    if config is not None and not getattr(config, "_skillc_pg_cleanup", False):
        config._skillc_pg_cleanup = True  # type: ignore[attr-defined]
        config.add_cleanup(cluster.stop)  # type: ignore[attr-defined]
    return cluster


def query(target: str | os.PathLike[str], sql: str) -> list[tuple[object, ...]]:
    """Rows of a read query on a store, whichever backend: a postgresql:// URL or a SQLite file
    (an absent file or missing tables give [], as a store another process is still creating)."""
    target = str(target)
    if target.startswith(("postgresql://", "postgres://")):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            return [tuple(r) for r in conn.execute(sql).fetchall()]
    import sqlite3

    if not os.path.exists(target):
        return []
    try:
        with sqlite3.connect(target, timeout=10) as db:
            return db.execute(sql).fetchall()
    except sqlite3.OperationalError:
        return []


def execute(target: str | os.PathLike[str], sql: str) -> None:
    """Run one writing statement on a store (tests that damage or rewind rows on purpose)."""
    target = str(target)
    if target.startswith(("postgresql://", "postgres://")):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            conn.execute(sql)
        return
    import sqlite3

    with sqlite3.connect(target, timeout=10) as db:
        db.execute(sql)


BACKENDS = ("sqlite", "postgres")


def store_target(backend: str, folder: Path) -> str:
    """Where a test's store lives: a SQLite file in `folder`, or a fresh database of the cluster."""
    if backend == "postgres":
        return require_cluster().new_database()
    return str(folder / "store.sqlite")


try:
    import pytest as _pytest
except ImportError:  # bench/ scripts use start_cluster()/shared_cluster() without pytest
    _pytest = None  # type: ignore[assignment]

if _pytest is not None:

    @_pytest.fixture(scope="session")
    def postgres_cluster(pytestconfig: "_pytest.Config") -> Cluster:
        """The test session's PostgreSQL cluster (skips with the reason when PostgreSQL is absent)."""
        return require_cluster(pytestconfig)

    @_pytest.fixture
    def postgres_url(postgres_cluster: Cluster) -> str:
        """A URL to a fresh, empty database of the session's cluster."""
        return postgres_cluster.new_database()

    @_pytest.fixture(params=BACKENDS)
    def store_backend(request: "_pytest.FixtureRequest", tmp_path: Path) -> str:
        """A store target per backend: a SQLite file, then a fresh PostgreSQL database (skipped
        with the reason when PostgreSQL is absent). Open it with `open_store(target)`."""
        if request.param == "postgres":
            return require_cluster(request.config).new_database()
        return str(tmp_path / "store.sqlite")
