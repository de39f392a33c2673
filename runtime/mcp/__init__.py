"""Business tools over MCP: the gateway (catalog, calls, §14.4 failure names) and its result types.

Importing this package does not import the `mcp` SDK; connecting does.
"""
from __future__ import annotations

from skillc.runtime.mcp.gateway import GatewayConfigError, InProcessServer, McpGateway, ServerSpec
from skillc.runtime.mcp.result import CallOutcome, ToolInfo, content_text, response_json

__all__ = [
    "CallOutcome",
    "GatewayConfigError",
    "InProcessServer",
    "McpGateway",
    "ServerSpec",
    "ToolInfo",
    "content_text",
    "response_json",
]
