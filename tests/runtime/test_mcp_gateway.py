"""McpGateway against real MCP servers: stdio processes, streamable HTTP on loopback, in-process."""
from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.words.errors import ERRORS
from skillc.runtime.mcp import GatewayConfigError, InProcessServer, McpGateway

SERVER = str(Path(__file__).parents[1] / "helpers" / "mcp_servers" / "basic_server.py")
TIMEOUT = 0.5

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def stdio(*args: str, **extra: Any) -> dict[str, Any]:
    """A `[mcp.servers.<name>]` entry running the test server with this interpreter."""
    return {"command": sys.executable, "args": [SERVER, *args], **extra}


class Invocations(list[tuple[str, dict[str, Any]]]):
    """Records on_invoked calls."""

    def __call__(self, tool: str, args: dict[str, Any]) -> None:
        self.append((tool, args))


@pytest.fixture(scope="module")
async def shared() -> AsyncIterator[tuple[McpGateway, Invocations]]:
    """One real stdio server (plus one that cannot start) for the read-only tests."""
    invoked = Invocations()
    servers = {"cms": stdio(env={"SKILLC_TEST_VAR": "from-config"}), "gone": {"command": "/nonexistent/skillc-server"}}
    async with McpGateway(servers, timeout=TIMEOUT, on_invoked=invoked) as gw:
        yield gw, invoked


async def test_catalog_lists_real_tools_and_records_unreachable(shared: tuple[McpGateway, Invocations]) -> None:
    gw, _ = shared
    assert {"lookup", "greet", "json_text", "refuse", "slow", "die"} <= set(gw.catalog)
    lookup = gw.catalog["lookup"]
    assert (lookup.server, lookup.title) == ("cms", "Look up an article")
    assert lookup.input_schema["properties"]["id"]["type"] == "integer"
    assert lookup.input_schema["required"] == ["id"]
    assert set(gw.unreachable_servers) == {"gone"}
    assert "nonexistent" in gw.unreachable_servers["gone"]


async def test_structured_content_is_the_response(shared: tuple[McpGateway, Invocations]) -> None:
    gw, invoked = shared
    outcome = await gw.call("lookup", {"id": 17})
    assert (outcome.error, outcome.response) == (None, {"id": 17, "title": "Spring"})
    assert outcome.ok and invoked[-1] == ("lookup", {"id": 17})


async def test_plain_text_becomes_text_object(shared: tuple[McpGateway, Invocations]) -> None:
    gw, _ = shared
    outcome = await gw.call("greet", {"name": "ann"})
    assert (outcome.error, outcome.response, outcome.message) == (None, {"text": "hello ann"}, "hello ann")


async def test_json_text_is_parsed(shared: tuple[McpGateway, Invocations]) -> None:
    gw, _ = shared
    outcome = await gw.call("json_text", {})
    assert (outcome.error, outcome.response) == (None, {"code": 200, "data": [1, 2]})


async def test_is_error_result_is_mcp_tool_error(shared: tuple[McpGateway, Invocations]) -> None:
    gw, _ = shared
    outcome = await gw.call("refuse", {"reason": "closed"})
    assert outcome.error == "MCP_TOOL_ERROR" and "refused: closed" in outcome.message
    assert outcome.error in ERRORS


async def test_config_env_reaches_the_process(shared: tuple[McpGateway, Invocations]) -> None:
    gw, _ = shared
    assert (await gw.call("echo_env", {"var": "SKILLC_TEST_VAR"})).response == {"text": "from-config"}


async def test_unknown_tool_with_a_server_down_is_unreachable(shared: tuple[McpGateway, Invocations]) -> None:
    gw, invoked = shared
    before = len(invoked)
    outcome = await gw.call("memory_read", {})
    assert outcome.error == "TOOL_UNREACHABLE" and "gone" in outcome.message
    assert len(invoked) == before


async def test_timeout_then_the_session_is_reopened(shared: tuple[McpGateway, Invocations]) -> None:
    gw, invoked = shared
    outcome = await gw.call("slow", {"seconds": 30}, timeout=0.3)
    assert (outcome.error, outcome.response) == ("TOOL_TIMEOUT", None)
    assert invoked[-1] == ("slow", {"seconds": 30})
    assert (await gw.call("lookup", {"id": 1})).response == {"id": 1, "title": "Spring"}


async def test_process_dying_mid_call_is_io_error_then_reconnects(shared: tuple[McpGateway, Invocations]) -> None:
    gw, invoked = shared
    outcome = await gw.call("die", {})
    assert (outcome.error, outcome.response) == ("TOOL_IO_ERROR", None)
    assert invoked[-1] == ("die", {})
    assert (await gw.call("lookup", {"id": 2})).response == {"id": 2, "title": "Spring"}


async def test_duplicate_tool_name_across_servers_is_config_error() -> None:
    gw = McpGateway({"left": stdio(), "right": stdio()}, timeout=TIMEOUT)
    with pytest.raises(GatewayConfigError) as info:
        await gw.start()
    message = str(info.value)
    assert "'left'" in message and "'right'" in message and "'lookup'" in message


async def test_server_that_exits_at_start_is_unreachable() -> None:
    async with McpGateway({"quits": {"command": sys.executable, "args": ["-c", "pass"]}}, timeout=TIMEOUT) as gw:
        assert gw.catalog == {} and "quits" in gw.unreachable_servers
        assert (await gw.call("lookup", {})).error == "TOOL_UNREACHABLE"


async def test_server_that_cannot_restart_is_unreachable(tmp_path: Path) -> None:
    invoked = Invocations()
    async with McpGateway({"cms": stdio("--once", str(tmp_path / "started"))}, timeout=TIMEOUT,
                          on_invoked=invoked) as gw:
        assert (await gw.call("die", {})).error == "TOOL_IO_ERROR"
        outcome = await gw.call("lookup", {"id": 3})
        assert outcome.error == "TOOL_UNREACHABLE" and "'cms'" in outcome.message
    assert invoked == [("die", {})]  # the refused call never reached a server


async def test_streamable_http_on_loopback() -> None:
    # The test binds the socket and hands it over, so the client can connect (the kernel queues
    # the connection) before the server process is up: no polling.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    process = subprocess.Popen([sys.executable, SERVER, "--http-fd", str(listener.fileno())],
                               pass_fds=[listener.fileno()])
    listener.close()
    invoked = Invocations()
    try:
        async with McpGateway({"web": {"url": f"http://127.0.0.1:{port}/mcp"}}, timeout=TIMEOUT,
                              on_invoked=invoked) as gw:
            assert gw.catalog["lookup"].server == "web"
            assert (await gw.call("lookup", {"id": 5})).response == {"id": 5, "title": "Spring"}
            assert (await gw.call("refuse", {})).error == "MCP_TOOL_ERROR"
            assert (await gw.call("slow", {}, timeout=0.3)).error == "TOOL_TIMEOUT"
            assert (await gw.call("die", {})).error == "TOOL_IO_ERROR"
            assert (await gw.call("greet", {"name": "x"})).error == "TOOL_UNREACHABLE"
    finally:
        process.kill()
        process.wait()
    assert [tool for tool, _ in invoked] == ["lookup", "refuse", "slow", "die"]


def in_process_server() -> Any:
    """An MCPServer in this process with a tool that waits until released."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("inproc")
    release = asyncio.Event()

    @server.tool()
    async def ping(n: int) -> dict[str, Any]:
        """Answer with n."""
        return {"n": n}

    @server.tool(structured_output=False)
    async def wait() -> str:
        """Answer once released."""
        await release.wait()
        return "released"

    return server


async def test_in_process_server_invocations_follow_the_flag() -> None:
    server = in_process_server()
    invoked = Invocations()
    async with McpGateway({"own": InProcessServer(server, reports_invocations=False)}, on_invoked=invoked) as gw:
        assert (await gw.call("ping", {"n": 1})).response == {"n": 1}
    async with McpGateway({"self": InProcessServer(server)}, on_invoked=invoked) as gw:
        assert (await gw.call("ping", {"n": 2})).response == {"n": 2}
    assert invoked == [("ping", {"n": 1})]


async def test_unknown_tool_with_all_servers_up() -> None:
    async with McpGateway({"own": in_process_server()}) as gw:
        assert (await gw.call("nope", {})).error == "TOOL_UNREACHABLE"


async def test_cancellation_is_not_swallowed() -> None:
    invoked = Invocations()
    async with McpGateway({"own": InProcessServer(in_process_server(), reports_invocations=False)},
                          on_invoked=invoked) as gw:
        task = asyncio.create_task(gw.call("wait", {}))
        while not invoked:  # the request is on its way once on_invoked has fired
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await gw.call("ping", {"n": 3})).response == {"n": 3}


async def test_a_failing_callback_is_a_programming_error() -> None:
    def broken(tool: str, args: dict[str, Any]) -> None:
        raise RuntimeError("trace store is gone")

    async with McpGateway({"own": InProcessServer(in_process_server(), reports_invocations=False)},
                          on_invoked=broken) as gw:
        with pytest.raises(RuntimeError, match="trace store"):
            await gw.call("ping", {"n": 4})
