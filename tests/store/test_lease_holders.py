"""A session's lease holder is known to this process (`store.base.holder_dead` tells a holder
whose store was closed from a live one) only while it holds the lease: the registry gains an entry
when a turn takes the lease and loses it when the turn gives the lease back, so a process that
serves many sessions does not keep one entry per session ever opened (issue 29, item 4)."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from helpers.ledger import FINISH, PLATFORM, POST, SERVER, USER, compile_ledger
from skillc.runtime.store import base, open_store
from helpers.by_path import load_module

BYPASS = {"state.write-confirm-bypass-tools": ["ledger_post"]}


def _ledger_module() -> Any:
    return load_module(SERVER, "skillc_test_ledger_server_holders")


def test_holders_are_released_with_their_lease(tmp_path: Path) -> None:
    from skillc.runtime.outside.config import Settings
    from skillc.runtime.compiled.loader import load_compiled
    from skillc.runtime.mcp.gateway import InProcessServer, McpGateway
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.session import Runtime

    compiled = compile_ledger(tmp_path / "compiled")
    ledger = _ledger_module()

    async def go() -> tuple[int, int, list[int]]:
        server = InProcessServer(ledger.build_server(str(tmp_path / "ledger.sqlite"), hang=False),
                                 reports_invocations=False)
        gateway = McpGateway({"ledger": server}, timeout=30)
        await gateway.start()
        model = ScriptedModel()
        runtime = Runtime(load_compiled(compiled), gateway, model, open_store(tmp_path / "store.sqlite"),
                          Settings.from_mapping(BYPASS), clock=lambda: 1_800_000_000.0, seed=7)
        before = len(base._LOCAL)
        during: list[int] = []
        try:
            sessions = [await runtime.open_session(PLATFORM, session_id=f"s{n}") for n in range(4)]
            seen = model.complete

            async def looking(request: Any) -> Any:
                during.append(len(base._LOCAL))  # mid-turn: this turn's holder is known
                return await seen(request)

            model.complete = looking  # type: ignore[method-assign]
            model.load_turn([POST, FINISH])
            reply = await sessions[0].send(USER)
            assert "Booked R-7001" in reply.text
        finally:
            await gateway.aclose()
        return before, len(base._LOCAL), during

    before, after, during = asyncio.run(go())
    assert after == before  # every turn's holder went with its lease
    assert during and all(n == before + 1 for n in during)
