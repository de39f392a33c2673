"""The web console's live server for browser tests: the real `skillc serve` app on a loopback port
(uvicorn in a thread of this process) over the compiled example studio and the example CMS MCP
server as a real stdio process, plus the callers the tests act as. Fixtures: tests/console/conftest.py."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from skillc.model_stub import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
# Every run takes the screenshots (a page that cannot render fails the test); they replace the
# ones in docs/img/ when SKILLC_SCREENSHOTS=docs, so a plain test run leaves the checkout clean.
IMG = ROOT / "docs" / "img" if os.environ.get("SKILLC_SCREENSHOTS") == "docs" else Path(tempfile.mkdtemp(prefix="skillc-shots-"))
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


class LiveServer:
    """The app served by uvicorn on a background thread, with its own event loop."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.sock = _free_socket()
        host, port = self.sock.getsockname()[:2]
        self.url = f"http://{host}:{port}"
        config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, name="console-uvicorn", daemon=True)
        self.failed: BaseException | None = None

    def _run(self) -> None:
        try:
            asyncio.run(self.server.serve(sockets=[self.sock]))
        except BaseException as exc:  # noqa: BLE001 - reported to the test that waits for start-up
            self.failed = exc

    def start(self) -> "LiveServer":
        self.thread.start()
        # uvicorn sets `started` once the lifespan ran and the socket serves; no polling sleep:
        # wait on the thread with a bounded join per check.
        for _ in range(3000):  # up to 150 s: the MCP server starts inside the lifespan (slow when the machine is busy)
            if self.server.started or self.failed or not self.thread.is_alive():
                break
            self.thread.join(0.05)
        if not self.server.started:
            raise RuntimeError(f"the console's server did not start: {self.failed!r}")
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)
        self.sock.close()


def _compiled_studio(tmp: Path) -> Path:
    """The example studio compiled into `tmp` (the compiler is a dev dependency of the tests)."""
    from skillc.compiler.build import compile_studio

    out = tmp / "compiled"
    compile_studio(ROOT / "examples" / "studio", out)
    return out


def start_live(tmp: Path, fake_model: FakeOpenAIServer, *, cms_args: list[str] | None = None,
               mcp_timeout: float | None = None, secret: str | None = None) -> LiveServer:
    """`skillc serve` over the compiled example studio and the example CMS server, in development
    mode, or checking gateway signatures made with `secret` (`cms_args`: another stdio MCP server
    serving the CMS tools, run with this Python)."""
    try:
        from skillc.runtime.server import create_app
    except ImportError as exc:  # the server package is not there: nothing to drive
        pytest.skip(f"skillc.runtime.server.create_app is unavailable: {exc}")
    compiled = _compiled_studio(tmp)
    env = {"CMS_DB": str(tmp / "cms.sqlite")}
    args = cms_args or ["-m", "skillc.examples.cms_server"]
    config = tmp / "skillc.toml"
    config.write_text(f"""
[studio]
source = {json.dumps(str(compiled))}
[store]
path = {json.dumps(str(tmp / "store.sqlite"))}
[model]
base_url = {json.dumps(fake_model.url)}
model = "fake"
[mcp]
timeout = {mcp_timeout or 30}
connect_timeout = 120
[mcp.servers.cms]
command = {json.dumps(sys.executable)}
args = {json.dumps(args)}
env = {{ {", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in env.items())} }}
[server]
{f'auth = "hmac"{chr(10)}secret = {json.dumps(secret)}' if secret else 'auth = "dev"'}
trace_dir = {json.dumps(str(tmp / "traces"))}
""", encoding="utf-8")
    server = LiveServer(create_app(config_path=str(config))).start()
    # the CMS server must be up, or every test would fail later for an unclear reason
    import httpx

    ready = httpx.get(f"{server.url}/readyz", timeout=30).json()
    cms = (ready.get("mcp") or {}).get("cms") or {}
    if not cms.get("ok"):
        server.stop()
        raise RuntimeError(f"the CMS MCP server did not start for the console tests: {cms}")
    return server


def identity_header(platform: dict[str, Any]) -> dict[str, str]:
    # Development mode takes the identity header as raw JSON (docs/API.md section 1).
    return {"X-Skillc-Identity": json.dumps(platform)}


ALICE = {"userId": 7, "memberId": 70, "name": "alice", "organId": 9, "organName": "Acme",
         "organType": "COMPANY", "deptPath": "/1/9"}
BOB = {"userId": 8, "memberId": 80, "name": "bob", "organId": 9, "organName": "Acme",
       "organType": "COMPANY", "deptPath": "/1/9"}
