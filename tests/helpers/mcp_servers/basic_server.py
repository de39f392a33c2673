"""A tiny real MCP server for the gateway tests (stdio by default, streamable HTTP with --http).

Tools: `lookup` (structured result), `greet` (plain text), `json_text` (JSON as text),
`refuse` (an isError result), `slow` (sleeps), `die` (kills its own process mid-call),
`echo_env` (reads an environment variable). `--prefix P` renames every tool to `P<name>`,
so two instances can serve distinct or clashing names. `--once MARKER` serves only the first
time (it creates MARKER; a later start finds it and exits), so a reconnect cannot succeed.
`--http-fd FD` serves streamable HTTP on an inherited listening socket: the test binds it
first, so a client can connect before the server is up (the kernel queues the connection).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


def build(prefix: str) -> MCPServer:
    """The server with its tools, names prefixed."""
    # Imported here so `--once` can refuse to start without paying for the mcp import.
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("skillc-test-basic")

    @server.tool(name=f"{prefix}lookup", title="Look up an article")
    async def lookup(id: int) -> dict[str, Any]:
        """Return an article as structured content."""
        return {"id": id, "title": "Spring"}

    @server.tool(name=f"{prefix}greet", structured_output=False)
    async def greet(name: str) -> str:
        """Return plain text that is not JSON."""
        return f"hello {name}"

    @server.tool(name=f"{prefix}json_text", structured_output=False)
    async def json_text() -> str:
        """Return JSON as a text block only."""
        return json.dumps({"code": 200, "data": [1, 2]})

    @server.tool(name=f"{prefix}refuse", structured_output=False)
    async def refuse(reason: str = "no") -> str:
        """Fail as a tool (isError)."""
        raise ToolError(f"refused: {reason}")

    @server.tool(name=f"{prefix}slow", structured_output=False)
    async def slow(seconds: float = 30.0) -> str:
        """Answer late (to trip the caller's timeout)."""
        await asyncio.sleep(seconds)
        return "late"

    @server.tool(name=f"{prefix}die", structured_output=False)
    async def die() -> str:
        """Kill this process while the call is in flight: the caller sees the connection end."""
        os._exit(3)

    @server.tool(name=f"{prefix}echo_env", structured_output=False)
    async def echo_env(var: str) -> str:
        """The value of an environment variable (checks `env` from the config)."""
        return os.environ.get(var, "")

    return server


def main() -> None:
    """Run over stdio, or streamable HTTP on 127.0.0.1:<port> with --http."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--prefix", default="")
    parser.add_argument("--once", default=None, help="refuse to start if this file exists; create it")
    parser.add_argument("--http-fd", type=int, default=None, help="serve streamable HTTP on this socket fd")
    args = parser.parse_args()
    if args.once is not None:
        if os.path.exists(args.once):
            raise SystemExit(1)
        open(args.once, "w").close()
    server = build(args.prefix)
    if args.http_fd is None:
        server.run()
        return
    import socket

    import anyio
    import uvicorn

    sock = socket.socket(fileno=args.http_fd)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main()
