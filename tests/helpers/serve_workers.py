"""Several real `skillc serve` processes on one store, for the scale-out tests and bench/scale.py.

A `Worker` is `python -m skillc serve COMPILED --config …` in its own process on a free loopback
port, with its own MCP server processes (the ledger server of tests/helpers/integration, which
records every `tools/call` in one shared SQLite file, so invocations are counted at the tool
across workers). All workers of a test share one store (`SKILLC_STORE_URL`) and one fake model
server. `Caller` signs requests as the gateway would and reads AG-UI streams.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from helpers.wait import wait_for

HERE = Path(__file__).resolve().parent
LEDGER_STUDIO = HERE / "integration" / "studios" / "ledger"
LEDGER_SERVER = HERE / "integration" / "ledger_server.py"
SECRET = "scale-out-test-secret"
ALICE = {"userId": 7, "memberId": 70, "name": "alice", "organId": 9}
DEADLINE = 120.0  # seconds: a bound on polling (a loaded 2-core machine starts processes slowly)


def free_port() -> int:
    """A free loopback port (the worker binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(folder: Path, *, model_url: str, store: str, records: Path, hang: bool = False,
                 confirm_bypass: bool = True, delay: float = 0.0, lease_ttl: float | None = None,
                 lock_timeout: float | None = None) -> Path:
    """A skillc.toml for one worker: the ledger server (hanging `ledger_post` when `hang`; booking
    and answering `delay` seconds after a call arrived), the fake model, `store` (a postgresql://
    URL or a SQLite path), the lease's ttl and the store's lock timeout when given."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {"LEDGER_DB": str(records), **({"LEDGER_HANG": "1"} if hang else {}),
           **({"LEDGER_DELAY": str(delay)} if delay else {})}
    key = "url" if store.startswith("postgresql://") else "path"
    ttl = f"lease_ttl = {lease_ttl}\n" if lease_ttl is not None else ""
    ttl += f"lock_timeout = {lock_timeout}\n" if lock_timeout is not None else ""
    bypass = '"state.write-confirm-bypass-tools" = ["ledger_post"]\n' if confirm_bypass else ""
    text = f"""
[store]
{key} = {json.dumps(store)}
{ttl}[model]
base_url = {json.dumps(model_url)}
model = "fake"
max_retries = 0
[mcp]
timeout = 120
connect_timeout = 120
[mcp.servers.ledger]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(LEDGER_SERVER))}]
env = {{ {", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())} }}
[server]
secret = {json.dumps(SECRET)}
studio_refresh = "1h"
[settings]
{bypass}"""
    path = folder / "skillc.toml"
    path.write_text(text, encoding="utf-8")
    return path


class Worker:
    """One `skillc serve` process; `kill()` is SIGKILL (its MCP servers are ended too)."""

    def __init__(self, compiled: Path, config: Path, name: str) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = config.parent / f"{name}.log"
        env = {k: v for k, v in os.environ.items() if k != "SKILLC_STORE_URL"}
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "skillc", "serve", str(compiled), "--config", str(config),
                 "--port", str(self.port)], stdout=out, stderr=subprocess.STDOUT, cwd=config.parent, env=env,
                start_new_session=True)  # its own process group: kill() reaches its MCP servers

    def ready(self) -> bool:
        """True once /readyz answers 200; raises when the process ended."""
        if self.proc.poll() is not None:
            raise AssertionError(f"worker {self.name} exited {self.proc.returncode}:\n{self.output()}")
        try:
            return httpx.get(self.url + "/readyz", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    def output(self) -> str:
        """The worker's log so far."""
        return self.log.read_text(errors="replace")[-6000:]

    def kill(self) -> None:
        """SIGKILL the worker and everything it started (its process group)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=60)

    def stop(self) -> None:
        """SIGTERM (graceful), then SIGKILL what is left of its group."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        self.kill()


def start_workers(compiled: Path, configs: list[Path]) -> list[Worker]:
    """Start one worker per config and wait until every one is ready."""
    workers = [Worker(compiled, cfg, f"w{i}") for i, cfg in enumerate(configs)]
    try:
        for w in workers:
            wait_for(w.ready, f"worker {w.name} to be ready", DEADLINE)
    except BaseException:
        for w in workers:
            w.kill()
        raise
    return workers


class Caller:
    """A gateway-signed AG-UI client for one user; `run()` posts a RunAgentInput to a worker."""

    def __init__(self, platform: dict[str, Any] | None = None) -> None:
        self.platform = platform or ALICE
        self.http = httpx.Client(timeout=httpx.Timeout(300, connect=30))

    def _headers(self, method: str, target: str, body: bytes) -> dict[str, str]:
        from skillc.runtime.server.auth import sign_request

        return sign_request(SECRET, method, target, body, self.platform)

    def run(self, worker: Worker, thread: str, run_id: str, text: str | None = None, *,
            resume: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """One run: {"status", "events" (AG-UI events), "error" (a JSON error body)}."""
        body: dict[str, Any] = {"threadId": thread, "runId": run_id,
                                "messages": [{"id": f"{run_id}.m", "role": "user", "content": text}] if text else []}
        if resume is not None:
            body["resume"] = resume
        raw = json.dumps(body).encode()
        headers = {**self._headers("POST", "/agui", raw), "Accept": "text/event-stream",
                   "Content-Type": "application/json"}
        out: dict[str, Any] = {"status": 0, "events": [], "error": None}
        with self.http.stream("POST", worker.url + "/agui", content=raw, headers=headers) as resp:
            out["status"] = resp.status_code
            if resp.status_code != 200:
                out["error"] = json.loads(resp.read() or b"{}").get("error")
                return out
            for line in resp.iter_lines():
                if line.startswith("data: "):
                    out["events"].append(json.loads(line[6:]))
        return out

    def get(self, worker: Worker, path: str) -> httpx.Response:
        """A signed GET of `path` on `worker`."""
        return self.http.get(worker.url + path, headers=self._headers("GET", path, b""))

    def close(self) -> None:
        """Close the HTTP client."""
        self.http.close()


def reply_text(run: dict[str, Any]) -> str:
    """The reply text of a run's stream."""
    return "".join(e.get("delta", "") for e in run["events"] if e["type"] == "TEXT_MESSAGE_CONTENT")


def outcome(run: dict[str, Any]) -> dict[str, Any]:
    """RUN_FINISHED's outcome (or the RUN_ERROR event)."""
    last = run["events"][-1] if run["events"] else {}
    return last.get("outcome", last)


def invocations(records: Path, tool: str) -> list[dict[str, Any]]:
    """Arguments of every call of `tool` the ledger servers recorded, in order."""
    if not records.exists():
        return []
    try:
        with sqlite3.connect(records, timeout=10) as db:
            rows = db.execute("SELECT args FROM invocation WHERE tool = ? ORDER BY n", (tool,)).fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []
    return [json.loads(a) for (a,) in rows]


def end_ledger_servers(records: Path) -> None:
    """SIGKILL the ledger servers that recorded into `records` (checking each pid is one)."""
    if not records.exists():
        return
    try:
        with sqlite3.connect(records, timeout=10) as db:
            pids = [p for (p,) in db.execute("SELECT pid FROM process")]
    except sqlite3.OperationalError:
        return
    for pid in pids:
        try:
            if str(LEDGER_SERVER).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass
