"""Pydantic AI's side of the peers turn: an `Agent` on a `FunctionModel`, direct, over MCP, or served.

- direct: the tool as a plain async function (`Agent.tool_plain`);
- mcp: `pydantic_ai.mcp.MCPToolset` on a stdio transport to the bench's tool server;
- serve: the agent behind Pydantic AI's AG-UI adapter (`AGUIAdapter.dispatch_request`) in a
  Starlette app under uvicorn on 127.0.0.1:--port, for `served.py` to drive over loopback.

The model double is a `FunctionModel` whose function counts the tool results in the messages and
asks for the next call, or answers the final text. Runs in its own venv (bench/peers/venvs.py).

Persistence (`--persist sqlite`): Pydantic AI stores nothing itself and documents how to keep a
conversation: its message history, `AgentRunResult.all_messages_json()`, saved by the
application after the run (served: in the adapter's `on_complete`). Here that JSON goes into a
SQLite file in a temporary folder, one row per conversation, committed after every run (WAL,
synchronous=NORMAL, as skillc's store), on the event loop's thread (no thread hop: the cheapest
way). `none`: nothing kept.

    python bench/peers/pydantic_ai_driver.py --mode direct|mcp [--persist none|sqlite] [--calls 5] [--turns 20]
        [--server JSON]
    python bench/peers/pydantic_ai_driver.py --mode serve --port 8123 [--persist none|sqlite] [--calls 5]
"""
from __future__ import annotations

import atexit
import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scenario  # noqa: E402

CONNECT_TIMEOUT = 120.0  # seconds for the MCP server to start and answer `initialize`


class MessageLog:
    """Conversations kept in a SQLite file: each run's `all_messages_json()` under its id, committed."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)  # autocommit: each statement commits
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS conversations (id TEXT PRIMARY KEY, messages BLOB NOT NULL)")
        self.count = 0

    def save(self, result: Any) -> None:
        """Keep the run's whole message history as a new conversation."""
        self.count += 1
        self.db.execute("INSERT OR REPLACE INTO conversations VALUES (?, ?)",
                        (f"c{self.count}", result.all_messages_json()))


def message_log(persist: str) -> MessageLog | None:
    """The log to save runs in (`--persist sqlite`), on a file in a new temporary folder (removed at
    exit); else None."""
    if persist != scenario.SQLITE:
        return None
    folder = tempfile.mkdtemp(prefix="peers-pydantic-ai-")
    atexit.register(shutil.rmtree, folder, True)
    return MessageLog(folder + "/messages.sqlite")


def build_agent(clock: scenario.Clock, mode: str, calls: int, server_cmd: list[str] | None) -> Any:
    """The agent with its model double and its tool (a function, or the MCP server's)."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import DeltaToolCall, FunctionModel

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        done = sum(1 for m in messages for p in m.parts if isinstance(p, ToolReturnPart))
        args = scenario.next_step(done, calls)
        if args is None:
            return ModelResponse(parts=[TextPart(scenario.FINAL)])
        return ModelResponse(parts=[ToolCallPart(scenario.TOOL, args, tool_call_id=f"c{done}")])

    async def stream(messages: list[Any], info: Any) -> Any:
        # The AG-UI adapter streams: the same decision, as one delta.
        done = sum(1 for m in messages for p in m.parts if isinstance(p, ToolReturnPart))
        args = scenario.next_step(done, calls)
        if args is None:
            yield scenario.FINAL
        else:
            yield {0: DeltaToolCall(name=scenario.TOOL, json_args=json.dumps(args), tool_call_id=f"c{done}")}

    model = FunctionModel(clock.timed_model(respond), stream_function=clock.timed_stream(stream))
    if mode == "mcp":
        import mcp
        from fastmcp.client.transports import StdioTransport
        from pydantic_ai.mcp import MCPToolset

        assert server_cmd, "--server is required with --mode mcp"
        clock.instrument_mcp(mcp.ClientSession)
        # The connection is made once, before the clock; its default 5 s handshake limit is too
        # short for a server process starting on a loaded machine.
        toolset = MCPToolset(StdioTransport(command=server_cmd[0], args=server_cmd[1:]), init_timeout=CONNECT_TIMEOUT)
        return Agent(model, toolsets=[toolset])
    agent = Agent(model)
    agent.tool_plain(name=scenario.TOOL)(clock.tool_function())
    return agent


async def in_process(mode: str, calls: int, turns: int, warmup: int, server_cmd: list[str] | None,
                     persist: str = scenario.NONE) -> list[float]:
    """Overhead per tool call of `turns` runs of the agent (its MCP connection held across them)."""
    clock = scenario.Clock()
    agent = build_agent(clock, mode, calls, server_cmd)
    log = message_log(persist)

    async def turn() -> None:
        result = await agent.run(scenario.PROMPT)
        if log is not None:
            log.save(result)
        if result.output != scenario.FINAL:
            raise SystemExit(f"unexpected output {result.output!r}")

    async with agent:
        return await scenario.measure(turn, clock, calls, turns, warmup)


def serve(port: int, calls: int, persist: str = scenario.NONE) -> None:
    """The agent (direct tool) behind the AG-UI adapter on 127.0.0.1:port."""
    import uvicorn
    from pydantic_ai.ui.ag_ui import AGUIAdapter
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    clock = scenario.Clock()  # the model's and the tool's time, which served.py takes out
    agent = build_agent(clock, "direct", calls, None)
    log = message_log(persist)

    async def saved(result: Any) -> None:  # async: the adapter would run a plain function on a thread
        assert log is not None
        log.save(result)

    async def run(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent, on_complete=saved if log else None)

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    app = Starlette(routes=[Route("/agui", run, methods=["POST"]), Route("/healthz", healthz)])
    uvicorn.run(scenario.with_clock(app, clock), host="127.0.0.1", port=port, log_level="warning")


def main() -> int:
    """Run one measurement (or serve) as the command line says."""
    return scenario.run_driver(__doc__, in_process, serve)


if __name__ == "__main__":
    sys.exit(main())
