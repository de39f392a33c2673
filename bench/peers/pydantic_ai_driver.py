"""Pydantic AI's side of the peers turn: an `Agent` on a `FunctionModel`, direct, over MCP, or served.

- direct: the tool as a plain async function (`Agent.tool_plain`);
- mcp: `pydantic_ai.mcp.MCPToolset` on a stdio transport to the bench's tool server;
- serve: the agent behind Pydantic AI's AG-UI adapter (`AGUIAdapter.dispatch_request`) in a
  Starlette app under uvicorn on 127.0.0.1:--port, for `served.py` to drive over loopback.

The model double is a `FunctionModel` whose function counts the tool results in the messages and
asks for the next call, or answers the final text. Runs in its own venv (bench/peers/venvs.py).

    python bench/peers/pydantic_ai_driver.py --mode direct|mcp [--calls 5] [--turns 20] [--server JSON]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scenario  # noqa: E402

CONNECT_TIMEOUT = 120.0  # seconds for the MCP server to start and answer `initialize`


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

    model = FunctionModel(clock.timed_model(respond), stream_function=stream)
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


async def in_process(mode: str, calls: int, turns: int, warmup: int, server_cmd: list[str] | None) -> list[float]:
    """Overhead per tool call of `turns` runs of the agent (its MCP connection held across them)."""
    clock = scenario.Clock()
    agent = build_agent(clock, mode, calls, server_cmd)

    async def turn() -> None:
        result = await agent.run(scenario.PROMPT)
        if result.output != scenario.FINAL:
            raise SystemExit(f"unexpected output {result.output!r}")

    async with agent:
        return await scenario.measure(turn, clock, calls, turns, warmup)


def serve(port: int, calls: int) -> None:
    """The agent (direct tool) behind the AG-UI adapter on 127.0.0.1:port."""
    import uvicorn
    from pydantic_ai.ui.ag_ui import AGUIAdapter
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    agent = build_agent(scenario.Clock(), "direct", calls, None)

    async def run(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    app = Starlette(routes=[Route("/agui", run, methods=["POST"]), Route("/healthz", healthz)])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def main() -> int:
    """Run one measurement (or serve) as the command line says."""
    return scenario.run_driver(__doc__, in_process, serve)


if __name__ == "__main__":
    sys.exit(main())
