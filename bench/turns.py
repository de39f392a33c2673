"""Turns per second through the whole runtime (not a test; prints one table measured in one run).

Each turn is one task with 5 business tool calls and a finish, played by the scripted model,
against an in-process MCP server (the scenario runner's canned server), over a SQLite store on
disk; 200 sessions. Time inside the model adapter and inside the gateway's tool call is measured
separately, so the runtime's own overhead per tool call is what is left.

    python bench/turns.py [--sessions 200]
Target: runtime overhead per tool call under 1 ms.
"""
from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

CONTRACT = """{
  "tools": {
    "cms_article_get": {
      "args": { "articleId": { "sources": ["USER", "EVIDENCE"], "label": "Article" } },
      "success": { "path": "code", "op": "EQ", "value": 200 },
      "extracts": [ { "key": "article", "path": "data", "entity": { "type": "article", "name": "title" } } ]
    }
  }
}"""
STUDIO = {
    "agents": [{"agent_code": "reader", "agent_name": "Reader", "identity_desc": "Reads", "mission_desc": "Reads",
                "boundary_desc": "", "style_desc": "", "principle_desc": "", "status": "ACTIVE", "skills": ["cms.read"]}],
    "skills": [{"skill_key": "cms.read", "skill_name": "Reader", "semantic_desc": "Reads articles", "skill_manual": "Read.",
                "status": "ACTIVE", "tools": ["cms_article_get"], "contract": CONTRACT}],
}
TOOLS = [{"name": "cms_article_get", "input_schema": {"type": "object", "properties": {"articleId": {"type": "integer"}},
                                                      "required": ["articleId"]},
          "responses": [{"json": {"code": 200, "data": {"id": 17, "title": "Spring launch"}}}]}]
SCRIPT = [{"call": {"tool": "cms_article_get", "args": {"articleId": 17 + i % 2}}} for i in range(5)] + [
    {"call": {"tool": "builtin_node_finish", "args": {"output": "read"}}}]


class Timed:
    """Wraps an async callable, adding its wall time to a counter."""

    def __init__(self, fn, counter: list[float]) -> None:
        self.fn, self.counter = fn, counter

    async def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return await self.fn(*args, **kwargs)
        finally:
            self.counter[0] += time.perf_counter() - start


async def main(sessions: int) -> None:
    from skillc.compiler.build import compile_studio
    from skillc.compiler.sources import studio_from_mapping
    from skillc.runtime.config import Settings
    from skillc.runtime.session import Runtime
    from skillc.runtime.loader import load_compiled
    from skillc.runtime.mcp.gateway import McpGateway
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.store import Store
    from skillc.runtime.trace import TraceWriter
    from skillc.scenario.canned import build_canned_server

    with tempfile.TemporaryDirectory() as tmp:
        compile_studio(studio_from_mapping(STUDIO, origin="bench"), Path(tmp) / "c")
        studio = load_compiled(Path(tmp) / "c")
        trace = TraceWriter(keep=False)
        server = build_canned_server(TOOLS, on_invoked=lambda t, a: None, on_crash=lambda: None)
        gateway = McpGateway({"mem": server}, timeout=10)
        await gateway.start()
        model = ScriptedModel()
        in_model, in_tool = [0.0], [0.0]
        model.complete = Timed(model.complete, in_model)
        gateway.call = Timed(gateway.call, in_tool)
        store = Store(Path(tmp) / "store.sqlite")
        runtime = Runtime(studio, gateway, model, store, Settings(), trace=trace, seed=1)
        # warm-up
        s = await runtime.open_session({"userId": 7}, session_id="warm")
        model.load_turn(SCRIPT)
        await s.send("read article 17 and 18")
        in_model[0] = in_tool[0] = 0.0
        start = time.perf_counter()
        for i in range(sessions):
            s = await runtime.open_session({"userId": 7}, session_id=f"s{i}")
            model.load_turn(SCRIPT)
            reply = await s.send("read article 17 and 18")
            assert reply.text == "read", reply
        total = time.perf_counter() - start
        await gateway.aclose()
        store.close()
    calls = sessions * 5
    overhead = total - in_model[0] - in_tool[0]
    print(f"{'sessions (1 turn, 1 task, 5 tool calls)':44} {sessions}")
    print(f"{'turns per second':44} {sessions / total:10.1f}")
    print(f"{'time in the model adapter':44} {in_model[0] / total:10.1%}")
    print(f"{'time in the MCP tool call (in-process)':44} {in_tool[0] / total:10.1%}")
    print(f"{'time in the runtime itself':44} {overhead / total:10.1%}")
    print(f"{'runtime overhead per tool call':44} {overhead / calls * 1000:10.3f} ms   (target < 1 ms)")
    print(f"{'MCP round trip per tool call':44} {in_tool[0] / calls * 1000:10.3f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    asyncio.run(main(parser.parse_args().sessions))
