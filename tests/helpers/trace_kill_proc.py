"""A real runtime process whose trace file is batched, SIGKILLed right before its write is sent
(tests/runtime/test_trace_batching.py). Usage: `python trace_kill_proc.py COMPILED STORE TRACE RECORDS`.

The kill comes after the write's pre-registration unit committed, so the store holds a chain
head for the session; the test checks the trace file holds the event that head names."""
from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import sys
from typing import Any


async def run(compiled: str, store_path: str, trace_path: str, records: str) -> None:
    from helpers.ledger import PLATFORM, POST, SERVER, USER
    from skillc.runtime.outside.config import Settings
    from skillc.runtime.compiled.loader import load_compiled
    from skillc.runtime.mcp.gateway import InProcessServer, McpGateway
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.session import Runtime
    from skillc.runtime.store import open_store
    from skillc.runtime.telemetry.trace import TraceWriter

    spec = importlib.util.spec_from_file_location("skillc_test_ledger_server_kill", SERVER)
    assert spec is not None and spec.loader is not None
    ledger = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ledger)
    gateway = McpGateway({"ledger": InProcessServer(ledger.build_server(records, hang=False), reports_invocations=False)},
                         timeout=30)
    await gateway.start()
    call = gateway.call

    async def dying_call(tool: str, args: dict[str, Any], **kw: Any) -> Any:
        if tool == "ledger_post":  # pre-registered and committed; the write is about to go out
            os.kill(os.getpid(), signal.SIGKILL)
        return await call(tool, args, **kw)

    gateway.call = dying_call  # type: ignore[method-assign]
    model = ScriptedModel()
    runtime = Runtime(load_compiled(compiled), gateway, model, open_store(store_path),
                      Settings.from_mapping({"state.write-confirm-bypass-tools": ["ledger_post"]}), seed=7,
                      trace=TraceWriter(trace_path))
    session = await runtime.open_session(PLATFORM, session_id="s1")
    model.load_turn([POST])
    await session.send(USER)


if __name__ == "__main__":
    asyncio.run(run(*sys.argv[1:5]))
