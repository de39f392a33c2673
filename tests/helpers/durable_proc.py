"""A real runtime process that SIGKILLs itself at a named point of a write's lifecycle
(tests/runtime/test_durable_crash.py). Usage: `python durable_proc.py JOB.json`; the job is the one of
runtime_proc.py plus `"kill_at"`, one of:

    prereg-before   entering the unit that pre-registers the write (nothing of it committed)
    prereg-after    the pre-registration committed, the tool not called yet
    answered        the tool answered, its outcome not committed
    settled-after   the settled write committed, the turn not ended
    turn-before     the task ended, entering the turn's unit (reply not stored)
    turn-after      the turn and its reply committed, the reply not handed over
    none            run to the end

With `"start_at"` (epoch seconds) the turns begin at that moment (two processes racing); a turn
refused with a caller error (SESSION_BUSY) prints {"error": name}, a reply {"reply": text}.

`mcp.invoked` events and the point reached are appended to the trace file (flushed per event).
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from typing import Any


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _kind(session: Any, reply: Any) -> str:
    if reply is not None:
        return "turn"
    writes = [ev for ev in session.dirty.values() if ev.side_effect == "WRITE"]
    if any(ev.status == "STARTED" for ev in writes):
        return "prereg"
    return "settled" if writes else "other"


async def run(job: dict[str, Any]) -> None:
    """Open the runtime, play the turns, die at job["kill_at"]."""
    from skillc.runtime import durable
    from skillc.runtime.words.errors import CallerError
    from skillc.runtime.outside.config import McpServerConfig, Settings
    from skillc.runtime.compiled.loader import load_compiled
    from skillc.runtime.mcp.gateway import McpGateway
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.session import Runtime
    from skillc.runtime.store import open_store

    kill_at = job.get("kill_at", "none")
    commit = durable.Durability.commit

    async def killing_commit(self: Any, reply: Any = None, handed: Any = None) -> None:
        kind = _kind(self.s, reply)
        if f"{kind}-before" == kill_at:
            _die()
        await commit(self, reply, handed)
        if f"{kind}-after" == kill_at:
            _die()

    durable.Durability.commit = killing_commit  # type: ignore[method-assign]
    servers = {name: McpServerConfig(**spec) for name, spec in job["servers"].items()}
    model = ScriptedModel()
    store = open_store(job["store"])  # a SQLite file or a postgresql:// URL
    async with McpGateway(servers, timeout=float(job.get("timeout", 30)),
                          connect_timeout=float(job.get("connect_timeout", 60))) as gateway:
        if kill_at == "answered":
            call = gateway.call

            async def dying_call(tool: str, args: dict[str, Any], **kw: Any) -> Any:
                outcome = await call(tool, args, **kw)
                if tool == "ledger_post":
                    _die()
                return outcome

            gateway.call = dying_call  # type: ignore[method-assign]
        runtime = Runtime(load_compiled(job["compiled"]), gateway, model, store,
                          Settings.from_mapping(job.get("settings") or {}), seed=7)
        session = await runtime.open_session(job.get("platform") or {}, session_id=job.get("session", "s1"))
        if "start_at" in job:  # racing another process: both go at the same moment
            while time.time() < job["start_at"]:
                pass
        for turn in job["turns"]:
            model.load_turn(turn.get("model") or [])
            try:
                if "user" in turn:
                    reply = await session.send(turn["user"], client_message_id=turn.get("id"))
                else:
                    reply = await session.answer(turn["answer"])
            except CallerError as exc:
                print(json.dumps({"error": exc.name}), flush=True)
                continue
            print(json.dumps({"reply": reply.text}), flush=True)
    store.close()


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        asyncio.run(run(json.load(f)))
