"""LangGraph's side of the peers turn: the prebuilt ReAct agent on a scripted chat model, direct or over MCP.

- direct: the tool as a plain async function (`langchain_core.tools.StructuredTool`);
- mcp: `langchain_mcp_adapters.tools.load_mcp_tools` on one held stdio session to the bench's
  tool server (a session per call would add a process start to every call).

The model double is a `BaseChatModel` whose step counts the `ToolMessage`s it is given and asks
for the next call, or answers the final text; `bind_tools` returns it unchanged. Runs in its own
venv (bench/peers/venvs.py).

Persistence (`--persist sqlite`): LangGraph's own, a checkpointer: `AsyncSqliteSaver` (the package
langgraph-checkpoint-sqlite; the synchronous `SqliteSaver` cannot serve `ainvoke`) on a file in a
temporary folder, opened once; each turn is a new thread (`thread_id`), and the graph writes a
checkpoint of its state at every step, as it does for any checkpointer. `none`: no checkpointer.

    python bench/peers/langgraph_driver.py --mode direct|mcp [--persist none|sqlite] [--calls 5] [--turns 20]
        [--server JSON]
"""
from __future__ import annotations

import sys
import tempfile
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


async def in_process(mode: str, calls: int, turns: int, warmup: int, server_cmd: list[str] | None,
                     persist: str = scenario.NONE) -> list[float]:
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
        checkpointer = None
        if persist == scenario.SQLITE:
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            folder = stack.enter_context(tempfile.TemporaryDirectory())
            checkpointer = await stack.enter_async_context(AsyncSqliteSaver.from_conn_string(f"{folder}/checkpoints.sqlite"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graph = create_react_agent(scripted_model(clock, calls), tools, checkpointer=checkpointer)
        count = iter(range(10**9))

        async def turn() -> None:
            config = {"configurable": {"thread_id": f"t{next(count)}"}}
            state = await graph.ainvoke({"messages": [("user", scenario.PROMPT)]}, config)
            if state["messages"][-1].content != scenario.FINAL:
                raise SystemExit(f"unexpected reply {state['messages'][-1].content!r}")

        return await scenario.measure(turn, clock, calls, turns, warmup)


def main() -> int:
    """Run one measurement as the command line says."""
    return scenario.run_driver(__doc__, in_process)


if __name__ == "__main__":
    sys.exit(main())
