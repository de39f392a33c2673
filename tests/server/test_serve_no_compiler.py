"""`skillc serve` of a compiled directory runs where the compiler (and Lark) cannot be imported,
as a real process: it starts, is ready, answers an AG-UI run, and stops on SIGTERM."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from serve_harness import ALICE, Client, write_config

BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "lark" or name.startswith("lark.") or name.startswith("skillc.compiler"):
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
from skillc.main import run
sys.exit(run(sys.argv[1:]))
"""


def free_port() -> int:
    """A free loopback port."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_runs_a_compiled_directory_without_the_compiler(compiled: Path, fake_model: Any, tmp_path: Path) -> None:
    port = free_port()
    config = write_config(tmp_path, str(compiled), fake_model.url)
    proc = subprocess.Popen([sys.executable, "-c", BLOCK, "serve", str(compiled), "--config", str(config),
                             "--port", str(port), "--dev-insecure"], stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # uvicorn says when the app has started (no polling)
            seen.append(line)
            if "Application startup complete" in line or "Traceback" in line:
                break
        assert "Application startup complete" in "".join(seen), "".join(seen)
        assert any("development mode" in line for line in seen)  # loud
        url = f"http://127.0.0.1:{port}"
        ready = httpx.get(url + "/readyz").json()
        assert ready["ready"] and ready["studio"]["kind"] == "compiled" and ready["auth"] == "dev-insecure"
        fake_model.add({"answer": {"agent": "editor"}}, {"tool_calls": [{"name": "builtin_node_follow_up",
                       "arguments": {"question": "Which title?", "expectedFields": ["title"]}}]})
        client = Client(url, "unused-in-dev-mode", ALICE)
        stream = client.run("nc", "nc-1", "Create an article")
        client.close()
        assert stream.interrupt["reason"] == "skillc.follow_up"
        assert httpx.get(url + "/healthz").headers["x-skillc-auth"] == "dev-insecure"
    finally:
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=60)[1] or ""
    # graceful: the lifespan shut down; uvicorn then re-raises the signal it caught
    assert "Application shutdown complete" in rest and proc.returncode in (0, -signal.SIGTERM), rest
