"""A tiny stdio MCP server whose tools carry MCP annotations, for `skillc check --servers`:
`thing_get` says destructiveHint (a contract that reads it is warned), `thing_put` says
readOnlyHint (a contract WRITE of it gets a note), `thing_list` says nothing."""
from __future__ import annotations

from typing import Any


def main() -> None:
    """Serve over stdio."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer("skillc-test-annotated")

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
    async def thing_get(id: int) -> dict[str, Any]:
        """Get a thing (but the server says it destroys)."""
        return {"code": 200, "data": {"id": id}}

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def thing_put(id: int) -> dict[str, Any]:
        """Put a thing (but the server says it only reads)."""
        return {"code": 200}

    @server.tool()
    async def thing_list() -> dict[str, Any]:
        """List things."""
        return {"code": 200, "data": []}

    server.run()


if __name__ == "__main__":
    main()
