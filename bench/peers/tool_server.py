"""The one small MCP server every framework's MCP client talks to over stdio.

It serves the peers turn's tool (`scenario.TOOL`), answering the fixed `scenario.RESULT` at once.
It runs under the bench's own interpreter (the `mcp` SDK skillc depends on), the same process
image for every framework, so each client pays for the same server.

    python bench/peers/tool_server.py
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scenario  # noqa: E402  (beside this file, found through the line above)


def build() -> Any:
    """The server, its one tool registered."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("peers-bench")

    @server.tool(name=scenario.TOOL, description=scenario.TOOL_DOC)
    def cms_article_get(articleId: int) -> dict[str, Any]:  # noqa: N803  (the tool's argument name)
        return scenario.tool_result(articleId)

    return server


if __name__ == "__main__":
    build().run("stdio")
