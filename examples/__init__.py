"""The bundled example studio and its demo MCP servers."""
