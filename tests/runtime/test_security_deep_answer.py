"""Finding 11: a tool answering JSON 5,000 levels deep after a write. The standard library's reader
recursed on it and raised RecursionError: the turn ended in an internal error and the write stayed
in flight. Now deep text is refused by a scan before any recursive read, the write is settled (the
call completed: a business failure saying why), and the session goes on. The MCP server is real
(in process, over the MCP protocol)."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from skillc.runtime.outside.config import Settings
from skillc.runtime.mcp import InProcessServer, McpGateway
from skillc.runtime.model.base import ModelRequest, ModelResponse, ToolCall
from skillc.runtime.model.double import ModelDouble
from skillc.runtime.session import Runtime
from skillc.runtime.store import Store
from skillc.runtime.telemetry.trace import TraceWriter

from helpers.node_harness import PLATFORM, START, agent, skill

CONTRACT = """
{ "target": "doc_save",
  "tools": {
    "doc_save": { "sideEffect": "WRITE", "confirm": false,
                  "args": { "title": { "sources": ["USER", "MODEL"] } },
                  "success": { "path": "code", "op": "EQ", "value": 0 } } } }
"""
STUDIO = {"agents": [agent("ed", ["doc.write"])], "skills": [skill("doc.write", ["doc_save"], CONTRACT)]}


def _server(depth: int, opener: str = "[") -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("deep-answers")
    closer = {"[": "]", "{": "}"}[opener]
    body = '{"a": ' * depth + "1" + "}" * depth if opener == "{" else opener * depth + closer * depth

    @server.tool(name="doc_save", structured_output=False)
    async def doc_save(title: str) -> str:
        """Save a document; answers JSON nested `depth` deep, as text."""
        return body

    return server


def _drive(tmp: Path, depth: int, opener: str = "[") -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    from skillc.compiler.build import compile_studio
    from skillc.compiler.sources import studio_from_mapping
    from skillc.runtime.compiled.loader import load_compiled

    compile_studio(studio_from_mapping(STUDIO, origin="deep"), tmp / "compiled")
    compiled = load_compiled(tmp / "compiled")
    steps = [ModelResponse(tool_calls=[ToolCall(id="c1", name="doc_save", arguments='{"title": "Spring"}')]),
             ModelResponse(tool_calls=[ToolCall(id="c2", name="builtin_node_fail", arguments='{"reason": "unreadable"}')])]

    def answer(request: ModelRequest) -> ModelResponse:
        return steps.pop(0)

    async def scenario() -> tuple[list[dict[str, Any]], dict[str, Any], str]:
        gateway = McpGateway({"deep": InProcessServer(_server(depth, opener), reports_invocations=False)}, timeout=30)
        await gateway.start()
        trace = TraceWriter(str(tmp / "trace.jsonl"), keep=True)
        store = Store(tmp / "store.sqlite")
        try:
            runtime = Runtime(compiled, gateway, ModelDouble(answer), store,
                              Settings.from_mapping({"state.write-confirm-bypass-tools": ["doc_save"]}),
                              clock=lambda: START, trace=trace, seed=1)
            session = await runtime.open_session(PLATFORM, session_id="s1")
            reply = await session.send("Save a doc titled Spring")
            return trace.events, session.state(), reply.text
        finally:
            store.close()
            await gateway.aclose()
    return asyncio.run(scenario())


def test_a_5000_deep_answer_after_a_write_settles_the_write(tmp_path: Path) -> None:
    events, state, reply = _drive(tmp_path, 5000)
    assert not [e for e in events if e["type"] == "error"], [e for e in events if e["type"] == "error"]
    assert "went wrong on our side" not in reply
    call = next(e for e in events if e["type"] == "tool.call" and e["tool"] == "doc_save")
    assert call["error"] == "TOOL_BUSINESS_FAILED" and "cannot be read" in call["message"] and "nesting" in call["message"]
    settled = [e for e in events if e["type"] == "write.settled"]
    assert settled and settled[0]["via"] == "call"
    assert [ev["status"] for ev in state["evidence"].values()] == ["SUCCESS"]  # settled, not in flight
    json.loads("[" + ",".join((tmp_path / "trace.jsonl").read_text(encoding="utf-8").splitlines()) + "]")


def test_deep_objects_and_shallow_answers_alike(tmp_path: Path) -> None:
    events, state, _ = _drive(tmp_path / "objects", 3000, "{")
    call = next(e for e in events if e["type"] == "tool.call" and e["tool"] == "doc_save")
    assert call["error"] == "TOOL_BUSINESS_FAILED" and [ev["status"] for ev in state["evidence"].values()] == ["SUCCESS"]
    # 100 deep is read, then refused by the border's depth limit: the same settled business failure
    events, state, _ = _drive(tmp_path / "hundred", 100)
    call = next(e for e in events if e["type"] == "tool.call" and e["tool"] == "doc_save")
    assert call["error"] == "TOOL_BUSINESS_FAILED" and [ev["status"] for ev in state["evidence"].values()] == ["SUCCESS"]
