"""Benchmark: cost of one tools/call round trip through McpGateway, against the SDK's own paths.

Run: `python bench/chain_mcp_roundtrip.py [N]`. Prints one table measured in one run: mean
microseconds per call and the ratio to the SDK's direct in-process dispatch (no JSON-RPC
framing), the fastest way the SDK can reach a tool.
"""
from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "helpers" / "mcp_servers" / "basic_server.py"


def _mcp_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")

    @server.tool()
    async def lookup(id: int) -> dict[str, Any]:
        """Structured answer."""
        return {"id": id, "title": "Spring"}

    return server


async def _per_call(call: Any, n: int) -> float:
    """Mean seconds per call after a short warm-up."""
    for i in range(min(20, n)):
        await call(i)
    start = time.perf_counter()
    for i in range(n):
        await call(i)
    return (time.perf_counter() - start) / n


async def main(n: int) -> None:
    """Measure every path and print the table."""
    from mcp import Client

    from skillc.runtime.mcp import InProcessServer, McpGateway
    from skillc.scenario import build_canned_server

    rows: list[tuple[str, float]] = []
    async with Client(_mcp_server()) as client:
        rows.append(("SDK Client, in-process direct dispatch", await _per_call(
            lambda i: client.call_tool("lookup", {"id": i}), n)))
    async with McpGateway({"own": InProcessServer(_mcp_server(), reports_invocations=False)},
                          on_invoked=lambda t, a: None) as gw:
        rows.append(("gateway, MCPServer in-process (JSON-RPC streams)", await _per_call(
            lambda i: gw.call("lookup", {"id": i}), n)))
    canned = build_canned_server([{"name": "lookup", "responses": [{"json": {"id": 1, "title": "Spring"}}]}],
                                 on_invoked=lambda t, a: None, on_crash=lambda: None)
    async with McpGateway({"scenario": canned}) as gw:
        rows.append(("gateway, canned scenario server", await _per_call(
            lambda i: gw.call("lookup", {"id": i}), n)))
    async with McpGateway({"cms": {"command": sys.executable, "args": [str(SERVER)]}},
                          on_invoked=lambda t, a: None) as gw:
        rows.append(("gateway, stdio server process", await _per_call(
            lambda i: gw.call("lookup", {"id": i}), n)))
    base = rows[0][1]
    print(f"tools/call round trip, N={n} per row")
    print(f"{'path':<52} {'us/call':>9} {'ratio':>7}")
    for name, seconds in rows:
        print(f"{name:<52} {seconds * 1e6:>9.0f} {seconds / base:>7.2f}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
