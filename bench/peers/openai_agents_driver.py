"""The OpenAI Agents SDK's side of the peers turn: an `Agent` on a custom `Model`, direct or over MCP.

- direct: the tool as a plain async function (`agents.function_tool`);
- mcp: `agents.mcp.MCPServerStdio` to the bench's tool server, held open across turns, its tool
  list cached.

The model double is a `Model` whose `get_response` counts the `function_call_output` items in its
input and returns the next function call, or the final text message. Tracing is off (it would
post to the vendor's service). Runs in its own venv (bench/peers/venvs.py).

Persistence (`--persist sqlite`): the SDK's own, a session: `agents.SQLiteSession` on a file in a
temporary folder, a new one (a new session id) each turn, passed to `Runner.run(session=...)`,
which reads its history before the run and adds the run's items after it; closed after the
turn. `none`: no session.

    python bench/peers/openai_agents_driver.py --mode direct|mcp [--persist none|sqlite] [--calls 5]
        [--turns 20] [--server JSON]
"""
from __future__ import annotations

import json
import sys
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scenario  # noqa: E402

CONNECT_TIMEOUT = 120.0  # seconds for the MCP server to start and answer a request


def scripted_model(clock: scenario.Clock, calls: int) -> Any:
    """The model double: one function call per step, then the final text."""
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    def respond(items: Any) -> ModelResponse:
        done = 0 if isinstance(items, str) else sum(
            1 for item in items if (item.get("type") if isinstance(item, dict) else getattr(item, "type", None))
            == "function_call_output")
        args = scenario.next_step(done, calls)
        if args is None:
            output: Any = ResponseOutputMessage(
                id=f"m{done}", type="message", role="assistant", status="completed",
                content=[ResponseOutputText(type="output_text", text=scenario.FINAL, annotations=[])])
        else:
            output = ResponseFunctionToolCall(id=f"f{done}", call_id=f"c{done}", type="function_call",
                                              name=scenario.TOOL, arguments=json.dumps(args))
        return ModelResponse(output=[output], usage=Usage(), response_id=None)

    timed = clock.timed_model(respond)

    class Scripted(Model):
        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            return timed(input)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the bench does not stream")

    return Scripted()


async def in_process(mode: str, calls: int, turns: int, warmup: int, server_cmd: list[str] | None,
                     persist: str = scenario.NONE) -> list[float]:
    """Overhead per tool call of `turns` runs of the agent."""
    from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)
    clock = scenario.Clock()
    model = scripted_model(clock, calls)
    config = RunConfig(model=model, tracing_disabled=True)
    async with AsyncExitStack() as stack:
        if mode == "mcp":
            import mcp
            from agents.mcp import MCPServerStdio

            assert server_cmd, "--server is required with --mode mcp"
            server = await stack.enter_async_context(MCPServerStdio(
                params={"command": server_cmd[0], "args": server_cmd[1:]}, cache_tools_list=True,
                client_session_timeout_seconds=CONNECT_TIMEOUT))  # its 5 s default: too short under load
            clock.instrument_mcp(mcp.ClientSession)
            agent = Agent(name="reader", instructions="Read.", model=model, mcp_servers=[server])
        else:
            tool = function_tool(clock.tool_function(), name_override=scenario.TOOL)
            agent = Agent(name="reader", instructions="Read.", model=model, tools=[tool])

        db = None
        if persist == scenario.SQLITE:
            from agents import SQLiteSession

            db = stack.enter_context(tempfile.TemporaryDirectory()) + "/sessions.sqlite"
        count = iter(range(10**9))

        async def turn() -> None:
            if db is None:
                result = await Runner.run(agent, scenario.PROMPT, run_config=config)
            else:
                session = SQLiteSession(f"s{next(count)}", db)
                try:
                    result = await Runner.run(agent, scenario.PROMPT, run_config=config, session=session)
                finally:
                    session.close()
            if result.final_output != scenario.FINAL:
                raise SystemExit(f"unexpected output {result.final_output!r}")

        return await scenario.measure(turn, clock, calls, turns, warmup)


def main() -> int:
    """Run one measurement as the command line says."""
    return scenario.run_driver(__doc__, in_process)


if __name__ == "__main__":
    sys.exit(main())
