"""Run a real skillc runtime process for tests that kill it (tests/runtime/test_crash_recovery.py).

Usage: `python runtime_proc.py JOB.json`, where the job is

    {"compiled": "<dir written by compile_studio>", "store": "<SQLite file>",
     "trace": "<JSON-lines file, flushed per event>", "servers": {"<name>": {command, args, env}},
     "settings": {<spec setting names>}, "platform": {...}, "session": "s1", "timeout": 30,
     "connect_timeout": 60,
     "turns": [{"user": "..."} or {"answer": {...}}, with "model": [<docs/reference/scenarios.md script entries>]]}

The turns run in order over one Runtime (scripted model, real MCP gateway over stdio, SQLite store),
exactly as a deployed runtime would run them; `mcp.invoked` events come from the gateway's
`on_invoked`. Nothing here tolerates being killed gracefully: that is the point.
"""
from __future__ import annotations

import asyncio
import json
import sys
from typing import Any


async def run(job: dict[str, Any]) -> None:
    """Open the runtime and play every turn of the job."""
    from skillc.runtime.outside.config import McpServerConfig, Settings
    from skillc.runtime.session import Runtime
    from skillc.runtime.compiled.loader import load_compiled
    from skillc.runtime.mcp.gateway import McpGateway
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.store import Store
    from skillc.runtime.telemetry.trace import TraceWriter

    trace = TraceWriter(job["trace"])
    session_ref: dict[str, Any] = {}

    def on_invoked(tool: str, args: dict[str, Any]) -> None:
        s = session_ref.get("s")
        trace.emit({"type": "mcp.invoked", "tool": tool, "args": args}, session=s.id if s else job.get("session", "s1"),
                   turn=s.env.session.turn if s else 0)

    servers = {name: McpServerConfig(**spec) for name, spec in job["servers"].items()}
    model = ScriptedModel()
    store = Store(job["store"])
    # A generous connect timeout: on a loaded machine a stdio server can take seconds to start.
    async with McpGateway(servers, timeout=float(job.get("timeout", 30)), on_invoked=on_invoked,
                          connect_timeout=float(job.get("connect_timeout", 60))) as gateway:
        runtime = Runtime(load_compiled(job["compiled"]), gateway, model, store,
                          Settings.from_mapping(job.get("settings") or {}), trace=trace, seed=7)
        session = await runtime.open_session(job.get("platform") or {}, session_id=job.get("session", "s1"))
        session_ref["s"] = session
        for turn in job["turns"]:
            model.load_turn(turn.get("model") or [])
            if "user" in turn:
                await session.send(turn["user"])
            else:
                await session.answer(turn["answer"])
    store.close()
    trace.close()


def main(argv: list[str]) -> None:
    """Read the job file named on the command line and run it."""
    with open(argv[1], encoding="utf-8") as fh:
        job = json.load(fh)
    asyncio.run(run(job))


if __name__ == "__main__":
    main(sys.argv)
