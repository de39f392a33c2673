"""The scenario runner's in-process MCP server: the scenario's `tools:` with canned answers.

Every invocation of a tool uses up the next entry of its `responses` (the last one repeats):
`json: X` (structured content X, plus its JSON text), `text: s` (text content only),
`error: msg` (an `isError` result), or `fault: timeout|io|rpc|unreachable|invalid_params|crash`.

Faults are produced where real failures come from, so the gateway classifies them on the very
code paths a real server's failures take (no flag tells the gateway "this was a fault"):

- Each gateway connection gets its own low-level MCP `Server` on in-memory JSON-RPC streams
  (the same dispatcher and framing as stdio); the response counters live in the shared state,
  so they survive the gateway's reconnects.
- The client's write stream is wrapped: when a `tools/call` goes out, the wrapper takes the
  tool's next entry. `unreachable` refuses the write with `anyio.BrokenResourceError`, exactly
  as writing to a server that has gone away fails: the request never reaches the server (no
  `on_invoked`) and the gateway reports `TOOL_UNREACHABLE`. Any other entry travels to the
  server's handler along with the request (keyed by the JSON-RPC request id).
- `rpc` and `invalid_params`: the handler raises `MCPError` before doing anything (no
  `on_invoked`); the SDK answers with a JSON-RPC error (-32603 / -32602), as a server that
  rejects a request does -> `MCP_RPC_ERROR` / `MCP_INVALID_PARAMS`.
- `timeout`: the handler records the invocation and never answers; the gateway's own timeout
  fires -> `TOOL_TIMEOUT`.
- `io`: the handler records the invocation, then closes the server->client stream, so the
  client reads end-of-stream with the request in flight (what a server process dying mid-call
  looks like on stdio) -> `TOOL_IO_ERROR`.
- `crash`: the handler records the invocation, calls `on_crash()` and never answers; the runner
  then abandons the runtime by cancelling its task (the gateway lets the cancellation through).

`mcp` is imported lazily, when a connection is opened.
"""
from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from skillc.runtime.mcp.gateway import InProcessServer
from skillc.runtime.mcp.observe import StreamWrapper

FAULTS = ("timeout", "io", "rpc", "unreachable", "invalid_params", "crash")
_KINDS = ("json", "text", "error", "fault")
_TOOL_KEYS = {"name", "title", "description", "input_schema", "responses"}
Response = tuple[str, Any]
_DEFAULT_RESPONSE: Response = ("json", {})  # a tool given no responses answers `{}`


@dataclass
class _CannedTool:
    """One scenario tool: what it advertises and its answers in order."""

    name: str
    title: str | None
    description: str | None
    input_schema: dict[str, Any]
    responses: list[Response]
    used: int = 0

    def take(self) -> Response:
        """The next answer (the last one repeats), used up now."""
        index = min(self.used, len(self.responses) - 1)
        self.used += 1
        return self.responses[index]


def _parse_response(tool: str, index: int, entry: Any) -> Response:
    """`{json: X}` -> ("json", X); rejects anything but exactly one known kind."""
    where = f"tool {tool!r} responses[{index}]"
    if not isinstance(entry, Mapping) or len(entry) != 1:
        raise ValueError(f"{where}: expected one of {{json|text|error|fault: …}}, got {entry!r}")
    ((kind, value),) = entry.items()
    if kind not in _KINDS:
        raise ValueError(f"{where}: unknown response kind {kind!r} (expected one of {', '.join(_KINDS)})")
    if kind == "fault" and value not in FAULTS:
        raise ValueError(f"{where}: unknown fault {value!r} (expected one of {', '.join(FAULTS)})")
    if kind in ("text", "error") and not isinstance(value, str):
        value = json.dumps(value) if not isinstance(value, (int, float)) or isinstance(value, bool) else str(value)
    return (kind, value)


def _parse_tool(entry: Any) -> _CannedTool:
    """Validate one `tools:` entry."""
    if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) or not entry["name"]:
        raise ValueError(f"a tool needs a non-empty `name`: {entry!r}")
    name = entry["name"]
    extra = set(entry) - _TOOL_KEYS
    if extra:
        raise ValueError(f"tool {name!r}: unknown keys {sorted(extra)} (expected {sorted(_TOOL_KEYS)})")
    schema = entry.get("input_schema")
    if schema is None:
        schema = {"type": "object"}
    if not isinstance(schema, Mapping):
        raise ValueError(f"tool {name!r}: input_schema must be a mapping")
    raw = entry.get("responses") or []
    if not isinstance(raw, list):
        raise ValueError(f"tool {name!r}: responses must be a list")
    responses = [_parse_response(name, i, r) for i, r in enumerate(raw)] or [_DEFAULT_RESPONSE]
    return _CannedTool(name, entry.get("title"), entry.get("description"), dict(schema), responses)


@dataclass
class _CannedState:
    """What all connections share: the tools, their counters, and the runner's callbacks."""

    tools: dict[str, _CannedTool]
    on_invoked: Callable[[str, dict[str, Any]], None]
    on_crash: Callable[[], None]
    connections: int = 0

    def connect(self) -> _CannedConnection:
        """A fresh transport (one per gateway connection)."""
        self.connections += 1
        return _CannedConnection(self)


@dataclass
class _CannedConnection:
    """A `Transport`: runs a low-level server for one client over in-memory streams."""

    state: _CannedState
    assigned: dict[Any, tuple[str, Response]] = field(default_factory=dict)
    _cm: AbstractAsyncContextManager[Any] | None = None
    _server_write: Any = None

    async def __aenter__(self) -> tuple[Any, Any]:
        self._cm = self._connect()
        return await self._cm.__aenter__()

    async def __aexit__(self, *exc: Any) -> Any:
        cm, self._cm = self._cm, None
        if cm is not None:
            return await cm.__aexit__(*exc)
        return None

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[tuple[Any, Any]]:
        import anyio
        from mcp.shared.memory import create_client_server_memory_streams

        server = self._server()
        async with create_client_server_memory_streams() as (client_streams, server_streams):
            client_read, client_write = client_streams
            server_read, server_write = server_streams
            self._server_write = server_write
            async with anyio.create_task_group() as tg:
                tg.start_soon(server.run, server_read, server_write, server.create_initialization_options())
                try:
                    yield client_read, _FaultInjectingWrite(client_write, self)
                finally:
                    # EOF lets the server wind down; cancel handlers that never answer (timeout, crash).
                    await client_write.aclose()
                    tg.cancel_scope.cancel()

    def _server(self) -> Any:
        import mcp_types as types
        from mcp.server import Server

        async def list_tools(ctx: Any, params: Any) -> Any:
            return types.ListToolsResult(tools=[
                types.Tool(name=t.name, title=t.title, description=t.description, input_schema=t.input_schema)
                for t in self.state.tools.values()
            ])

        return Server("skillc-scenario", on_list_tools=list_tools, on_call_tool=self._call_tool)

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        """Answer one `tools/call` with the entry the write wrapper took for it."""
        import anyio
        import mcp_types as types
        from mcp import MCPError

        taken = self.assigned.pop(ctx.request_id, None)
        if taken is None:
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"unknown tool {params.name!r}")],
                                        is_error=True)
        tool, (kind, value) = taken
        if kind == "fault" and value == "rpc":
            raise MCPError(code=types.INTERNAL_ERROR, message=f"canned RPC error from {tool}")
        if kind == "fault" and value == "invalid_params":
            raise MCPError(code=types.INVALID_PARAMS, message=f"canned invalid params for {tool}")
        self.state.on_invoked(tool, dict(params.arguments or {}))
        if kind == "fault":
            if value == "io":
                await self._server_write.aclose()
            elif value == "crash":
                self.state.on_crash()
            await anyio.sleep_forever()  # timeout, io, crash: the answer never comes
        if kind == "json":
            return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(value))],
                                        structured_content=value)
        return types.CallToolResult(content=[types.TextContent(type="text", text=value)], is_error=kind == "error")


class _FaultInjectingWrite(StreamWrapper):
    """Client->server stream: takes the tool's next answer as each `tools/call` goes out."""

    def __init__(self, inner: Any, conn: _CannedConnection) -> None:
        super().__init__(inner)
        self._conn = conn

    async def send(self, item: Any) -> None:
        """Forward `item`; refuse a `tools/call` whose next answer is `fault: unreachable`."""
        import anyio

        message = getattr(item, "message", None)
        if message is not None and getattr(message, "method", None) == "tools/call":
            name = (message.params or {}).get("name")
            tool = self._conn.state.tools.get(name) if isinstance(name, str) else None
            if isinstance(name, str) and tool is not None:
                response = tool.take()
                if response == ("fault", "unreachable"):
                    raise anyio.BrokenResourceError(f"canned tool {name!r} is unreachable")
                self._conn.assigned[message.id] = (name, response)
        await self._inner.send(item)


def build_canned_server(tools: list[dict[str, Any]], *, on_invoked: Callable[[str, dict[str, Any]], None],
                        on_crash: Callable[[], None]) -> InProcessServer:
    """An in-process server for `McpGateway` serving the scenario's `tools:`.

    `on_invoked(tool, args)` is called each time a tool is really reached (the runner records
    `mcp.invoked`); `on_crash()` when a `fault: crash` is reached. Raises ValueError for a
    malformed entry or a duplicate tool name, with
    `.index` set to the position of the offending entry in `tools`.
    """
    parsed: dict[str, _CannedTool] = {}
    for index, entry in enumerate(tools):
        try:
            tool = _parse_tool(entry)
            if tool.name in parsed:
                raise ValueError(f"tool {tool.name!r} is listed twice")
        except ValueError as exc:
            exc.index = index  # type: ignore[attr-defined]  # which entry, for the runner's file:line
            raise
        parsed[tool.name] = tool
    state = _CannedState(parsed, on_invoked, on_crash)
    return InProcessServer(state.connect, reports_invocations=True)
