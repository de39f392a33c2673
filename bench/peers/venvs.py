"""Each peer framework's own virtual environment, made by the bench once and kept in the cache.

`$XDG_CACHE_HOME/skillc-bench/peers/<name>` (default `~/.cache/...`): a plain venv (no system
site-packages, so no version skillc happens to have leaks in), pip-installed from the package
index with the pins below, the versions the bench was run with. A `ready` file holds the pins it
was made with; a changed pin list makes the venv again. Nothing here is imported by skillc.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

# Tested together (Python 3.11); each framework's MCP client brings the `mcp` SDK it wants.
REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "langgraph": ("langgraph==1.2.24", "langgraph-prebuilt==1.1.3", "langchain-core==1.8.3",
                  "langchain-mcp-adapters==0.3.2", "mcp==1.30.0",
                  "langgraph-checkpoint-sqlite==3.1.2", "aiosqlite==0.22.1"),
    "openai-agents": ("openai-agents==0.24.0", "openai==3.57.0", "mcp==2.3.0"),
    "pydantic-ai": ("pydantic-ai-slim[mcp,ag-ui]==2.68.0", "fastmcp-slim==4.2.3", "ag-ui-protocol==1.0.0",
                    "mcp==2.3.0", "uvicorn==0.54.0", "starlette==1.10.0",
                    "httptools==0.9.0"),  # uvicorn's C parser, as skillc serve has it: the same HTTP work on both sides
}
INSTALL_TIMEOUT = 1800.0  # seconds for one venv's pip install (a cold cache on a slow mirror)


def cache_root() -> Path:
    """Where the peers' venvs live."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "skillc-bench" / "peers"


def python_of(name: str) -> Path:
    """The interpreter of peer `name`'s venv."""
    return cache_root() / name / "bin" / "python"


def is_ready(name: str) -> bool:
    """Whether `name`'s venv exists with exactly the current pins."""
    marker = cache_root() / name / "ready"
    return marker.exists() and marker.read_text() == "\n".join(REQUIREMENTS[name])


def start_install(name: str) -> subprocess.Popen[bytes] | None:
    """Begin making `name`'s venv (None when it is ready); the caller waits on the process."""
    if is_ready(name):
        return None
    where = cache_root() / name
    shutil.rmtree(where, ignore_errors=True)
    where.parent.mkdir(parents=True, exist_ok=True)
    print(f"making the {name} venv in {where} (once) …", file=sys.stderr)
    pins = " ".join(f"'{p}'" for p in REQUIREMENTS[name])
    script = (f"'{sys.executable}' -m venv '{where}' && '{where}/bin/python' -m pip install -q "
              f"--disable-pip-version-check {pins} > '{where}.log' 2>&1")
    return subprocess.Popen(["sh", "-c", script])


def ensure(names: list[str]) -> None:
    """Make every missing venv of `names`, all at once, each bounded by INSTALL_TIMEOUT."""
    running = {name: proc for name in names if (proc := start_install(name)) is not None}
    for name, proc in running.items():
        try:
            code = proc.wait(INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
            raise SystemExit(f"installing {name} took more than {INSTALL_TIMEOUT:.0f} s") from None
        if code != 0:
            log = cache_root() / f"{name}.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise SystemExit(f"installing {name} failed ({code}); see {log}:\n{tail}")
        (cache_root() / name / "ready").write_text("\n".join(REQUIREMENTS[name]))
