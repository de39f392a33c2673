"""LangGraph's side of the peers turn: the prebuilt ReAct agent on a scripted chat model, direct or over MCP.

- direct: the tool as a plain async function (`langchain_core.tools.StructuredTool`);
- mcp: `langchain_mcp_adapters.tools.load_mcp_tools` on one held stdio session to the bench's
  tool server (a session per call would add a process start to every call).

The model double is a `BaseChatModel` whose step counts the `ToolMessage`s it is given and asks
for the next call, or answers the final text; `bind_tools` returns it unchanged. Runs in its own
venv (bench/peers/venvs.py).

    python bench/peers/langgraph_driver.py --mode direct|mcp [--calls 5] [--turns 20] [--server JSON]
"""
from __future__ import annotations

import sys
import warnings
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scenario  # noqa: E402


def scripted_model(clock: scenario.Clock, calls: int) -> Any:
    """The chat model double: one tool call per step, then the final text."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    def respond(messages: list[Any]) -> ChatResult:
        done = sum(1 for m in messages if isinstance(m, ToolMessage))
        args = scenario.next_step(done, calls)
        if args is None:
            message = AIMessage(content=scenario.FINAL)
        else:
            message = AIMessage(content="", tool_calls=[{"name": scenario.TOOL, "args": args, "id": f"c{done}",
                                                         "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=message)])

    timed = clock.timed_model(respond)

    class Scripted(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            return timed(messages)

        async def _agenerate(self, messages: list[Any], stop: Any = None, run_manager: Any = None,
                             **kwargs: Any) -> Any:
            return timed(messages)

    return Scripted()


async def in_process(mode: str, calls: int, turns: int, warmup: int, server_cmd: list[str] | None) -> list[float]:
    """Overhead per tool call of `turns` invocations of the compiled graph."""
    from langchain_core.tools import StructuredTool

    with warnings.catch_warnings():  # create_react_agent's deprecation notice: it is the prebuilt agent asked for
        warnings.simplefilter("ignore")
        from langgraph.prebuilt import create_react_agent

    clock = scenario.Clock()
    async with AsyncExitStack() as stack:
        if mode == "mcp":
            import mcp
            from langchain_mcp_adapters.tools import load_mcp_tools
            from mcp.client.stdio import StdioServerParameters, stdio_client

            assert server_cmd, "--server is required with --mode mcp"
            read, write = await stack.enter_async_context(
                stdio_client(StdioServerParameters(command=server_cmd[0], args=server_cmd[1:])))
            session = await stack.enter_async_context(mcp.ClientSession(read, write))
            await session.initialize()
            tools = await load_mcp_tools(session)
            clock.instrument_mcp(mcp.ClientSession)
        else:
            tools = [StructuredTool.from_function(coroutine=clock.tool_function(), name=scenario.TOOL,
                                                  description=scenario.TOOL_DOC)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = create_react_agent(scripted_model(clock, calls), tools)

        async def turn() -> None:
            state = await graph.ainvoke({"messages": [("user", scenario.PROMPT)]})
            if state["messages"][-1].content != scenario.FINAL:
                raise SystemExit(f"unexpected reply {state['messages'][-1].content!r}")

        return await scenario.measure(turn, clock, calls, turns, warmup)


def main() -> int:
    """Run one measurement as the command line says."""
    return scenario.run_driver(__doc__, in_process)


if __name__ == "__main__":
    sys.exit(main())
