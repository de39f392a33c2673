"""The MCP gateway: one catalog of business tools over several MCP servers, and §14.4 failures.

Each server gets one connection, owned by a background task that enters the SDK's `Client`
and holds it open (anyio scopes must be exited by the task that entered them, and calls come
from whatever task runs the conversation). The gateway wraps every transport's streams
(`observe.py`) to see two facts the SDK's errors alone do not tell apart:

- whether the `tools/call` request was written (a refused write means the server was never
  reached: `TOOL_UNREACHABLE`; a connection that ends after the write: `TOOL_IO_ERROR`);
- whether the connection has ended (then it is reopened lazily, before the next call).

Classification, in order: no connection and none can be opened, or the request could not be
written -> `TOOL_UNREACHABLE`; no answer within the timeout -> `TOOL_TIMEOUT`; the connection
ended after the request was written (the SDK's -32000, "connection closed", also synthesized by
the HTTP transport for a broken stream) -> `TOOL_IO_ERROR`; another JSON-RPC error ->
`MCP_INVALID_PARAMS` (-32602) or `MCP_RPC_ERROR`; an `isError` result -> `MCP_TOOL_ERROR`;
anything else -> `TOOL_ERROR`.
A timeout or I/O failure leaves the session suspect, so it is reopened before the next call.

`mcp` is imported lazily (it costs about 0.6 s).
"""
from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from skillc.runtime.text import jsontext
from skillc.runtime.outside.config import McpServerConfig
from skillc.runtime.words.errors import ErrorName, SkillcError
from skillc.runtime.mcp.observe import CURRENT_CALL, CallRecord, Link, ObservedTransport, OnInvoked
from skillc.runtime.mcp.result import CallOutcome, ToolInfo, content_text, response_json

if TYPE_CHECKING:
    from mcp import Client

log = logging.getLogger(__name__)


class ToolSpan(Protocol):
    """What a tool-call hook yields to the gateway: `_meta` to send, and the outcome back."""

    meta: dict[str, Any]

    def done(self, outcome: Any) -> None:
        """The call's outcome (a `CallOutcome`)."""


# (tool, server) -> a context around one `tools/call`; telemetry installs one (Telemetry.install)
ToolCallHook = Callable[[str, "str | None"], AbstractContextManager[ToolSpan]]

_JSONRPC_INVALID_PARAMS = -32602
_JSONRPC_CONNECTION_CLOSED = -32000  # the SDK's code for "the transport closed under a request"
_JSONRPC_REQUEST_TIMEOUT = -32001
_CLOSE_GRACE = 5.0  # seconds to let a connection (and a stdio server process) wind down


class GatewayConfigError(SkillcError):
    """The servers cannot form one catalog (e.g. two servers list the same tool name)."""


def catalog_clashes(listed: Iterable[tuple[str, Iterable[str]]]) -> list[str]:
    """One line per tool name a later server lists again, as `start` refuses them (`listed`:
    (server, its tool names) in the configured order); `skillc check --servers` reports the same."""
    first: dict[str, str] = {}
    clash: list[str] = []
    for server, tools in listed:
        for tool in tools:
            if tool in first:
                clash.append(f"tool {tool!r} is served by both {first[tool]!r} and {server!r}")
            else:
                first[tool] = server
    return clash


@dataclass(frozen=True)
class InProcessServer:
    """A server run inside this process: an `MCPServer`/low-level `Server`, a `Transport`, or a
    zero-argument callable returning a fresh `Transport` per connection (so it can reconnect).

    With `reports_invocations` (the default) the server emits its own `mcp.invoked`, so the
    gateway does not call `on_invoked` for its tools.
    """

    target: Any
    reports_invocations: bool = True


ServerSpec = McpServerConfig | InProcessServer | Mapping[str, Any]


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


def _make_transport(spec: McpServerConfig | InProcessServer) -> Any:
    """A fresh SDK transport (async context manager yielding streams) for one connection."""
    if isinstance(spec, McpServerConfig):
        if spec.url is not None:
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(spec.url)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        assert spec.command is not None  # validated: exactly one of command/url
        # The SDK's default errlog is the sys.stderr of its import time; pick it now, and a real
        # file: a replaced sys.stderr (pytest capture, an embedding app) may have no fileno.
        errlog = sys.stderr if _has_fileno(sys.stderr) or sys.__stderr__ is None else sys.__stderr__
        return stdio_client(StdioServerParameters(command=spec.command, args=list(spec.args),
                                                  env=dict(spec.env) or None, cwd=spec.cwd), errlog=errlog)
    from mcp.client._memory import InMemoryTransport
    from mcp.server import Server
    from mcp.server.mcpserver import MCPServer

    target = spec.target
    # Servers go over in-memory streams (not the SDK's direct dispatcher) so in-process
    # calls take the same JSON-RPC path, and the same failure classification, as stdio.
    if isinstance(target, (Server, MCPServer)):
        return InMemoryTransport(target)
    if callable(target) and not hasattr(target, "__aenter__"):
        return target()
    return target


class _Connection:
    """One server's live connection: a `Client` entered and held open by an owner task."""

    def __init__(self, name: str, spec: McpServerConfig | InProcessServer, connect_timeout: float) -> None:
        self.name = name
        self.spec = spec
        self.connect_timeout = connect_timeout
        self.client: Client | None = None
        self.link = Link()
        self.suspect = False
        self.last_error: str | None = None
        self.reopening = asyncio.Lock()
        self._owner: asyncio.Task[None] | None = None
        self._closing: asyncio.Event | None = None

    @property
    def alive(self) -> bool:
        """Open, and nothing seen that would make the next call fail for transport reasons."""
        return (self.client is not None and not self.suspect
                and not self.link.eof and not self.link.write_failed)

    async def open(self) -> list[Any]:
        """Connect and list every tool (all pages); raises if the server cannot be reached."""
        await self.close()
        self.link = Link()
        self.suspect = False
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[tuple[Client, list[Any]]] = loop.create_future()
        closing = asyncio.Event()
        owner = asyncio.create_task(self._own(ready, closing, self.link), name=f"skillc-mcp-{self.name}")
        self._owner, self._closing = owner, closing
        try:
            async with asyncio.timeout(self.connect_timeout):
                client, tools = await asyncio.shield(ready)
        except BaseException:
            closing.set()
            owner.cancel()
            self._owner = self._closing = None
            raise
        self.client = client
        self.last_error = None
        return tools

    async def _own(self, ready: asyncio.Future[tuple[Client, list[Any]]], closing: asyncio.Event,
                   link: Link) -> None:
        from mcp import Client

        client: Client | None = None
        try:
            async with Client(ObservedTransport(_make_transport(self.spec), link), cache=None) as client:
                tools: list[Any] = []
                cursor: str | None = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
                if not ready.done():
                    ready.set_result((client, tools))
                await closing.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except (Exception, BaseExceptionGroup) as exc:  # reported to `open`'s caller
            if not ready.done():
                ready.set_exception(exc)
            else:
                log.debug("MCP server %s: connection ended: %r", self.name, exc)
        finally:
            # This owner's connection is over; a newer one (after a reconnect) is left alone.
            link.eof = True
            if client is not None and self.client is client:
                self.client = None

    async def close(self) -> None:
        """End the connection (stops a stdio server process); bounded, never raises."""
        owner, closing = self._owner, self._closing
        self._owner = self._closing = None
        self.client = None
        if owner is None or closing is None:
            return
        closing.set()
        done, _ = await asyncio.wait({owner}, timeout=_CLOSE_GRACE)
        if not done:
            owner.cancel()
            await asyncio.wait({owner}, timeout=_CLOSE_GRACE)
        elif not owner.cancelled() and owner.exception() is not None:
            log.debug("MCP server %s: close: %r", self.name, owner.exception())


def _as_spec(spec: ServerSpec | Any) -> McpServerConfig | InProcessServer:
    """Normalise a server entry: config, mapping (validated as config), or an in-process object."""
    if isinstance(spec, (McpServerConfig, InProcessServer)):
        return spec
    if isinstance(spec, Mapping):
        return McpServerConfig.model_validate(dict(spec))
    return InProcessServer(spec)


def describe_failure(exc: BaseException) -> str:
    """A one-line reason, unwrapping exception groups to their first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _response_of(result: Any, text: str) -> Any:
    """The response JSON (docs/interpretations.md: Response JSON); an answer with no structured
    content and no text (or only whitespace) is the empty response "" (docs/interpretations.md:
    Empty response), not `{"text": ""}`: a tool that answers nothing has answered emptily (§6.1 "配置了 success 而响应为空 → 业务失败")."""
    if result.structured_content is None and not text.strip():
        return ""
    return response_json(result)


class McpGateway:
    """Tool name -> server catalog over MCP servers; `call` turns every failure into a §14.4 name.

    Use as `async with McpGateway(servers) as gw:` or call `start()` / `aclose()`.
    `catalog` maps tool names to `ToolInfo`; `unreachable_servers` maps the servers that could
    not be started to the reason (their tools are absent from the catalog).
    """

    def __init__(self, servers: Mapping[str, ServerSpec | Any], *, timeout: float = 30.0,
                 on_invoked: OnInvoked | None = None, connect_timeout: float = 10.0) -> None:
        self.timeout = timeout
        self.on_invoked = on_invoked
        self.connect_timeout = connect_timeout
        self.call_hook: ToolCallHook | None = None  # around every tools/call (telemetry's spans; None: zero cost)
        self.catalog: dict[str, ToolInfo] = {}
        self.unreachable_servers: dict[str, str] = {}
        self._conns = {name: _Connection(name, _as_spec(spec), connect_timeout) for name, spec in servers.items()}

    async def start(self) -> None:
        """Connect every server (concurrently) and build the catalog.

        A server that cannot start is recorded in `unreachable_servers`; a tool name listed by
        two servers raises `GatewayConfigError` naming both (after closing what was opened).
        """
        names = list(self._conns)
        results = await asyncio.gather(*(self._conns[n].open() for n in names), return_exceptions=True)
        catalog: dict[str, ToolInfo] = {}
        listed: list[tuple[str, list[str]]] = []
        for name, result in zip(names, results):
            if isinstance(result, asyncio.CancelledError):
                raise result
            if isinstance(result, BaseException):
                reason = describe_failure(result) if not isinstance(result, TimeoutError) else (
                    f"no answer within {self.connect_timeout:g} s")
                self.unreachable_servers[name] = reason
                self._conns[name].last_error = reason
                log.warning("MCP server %s unreachable: %s", name, reason)
                continue
            listed.append((name, [tool.name for tool in result]))
            for tool in result:
                if tool.name not in catalog:
                    catalog[tool.name] = ToolInfo(name=tool.name, title=tool.title, description=tool.description,
                                                  input_schema=dict(tool.input_schema), server=name)
        clash = catalog_clashes(listed)
        if clash:
            await self.aclose()
            raise GatewayConfigError("; ".join(clash))
        self.catalog = catalog

    async def call(self, tool: str, args: dict[str, Any], *, timeout: float | None = None,
                   on_invoked: OnInvoked | None = None, meta: Mapping[str, Any] | None = None) -> CallOutcome:
        """Call `tool`; never raises for a tool failure (the outcome's `error` names it).

        `on_invoked` (tool, args), when given, reports this call's `tools/call` instead of the
        gateway-wide callback (each session passes its own, so concurrent sessions never mix);
        servers that report their own invocations ignore both. `meta` is sent as the request's
        `_meta`; when telemetry is on, the W3C `traceparent` of the tool span joins it.
        """
        hook = self.call_hook
        if hook is None:
            return await self._call(tool, args, timeout, on_invoked, meta)
        info = self.catalog.get(tool)
        with hook(tool, info.server if info else None) as span:
            outcome = await self._call(tool, args, timeout, on_invoked, {**span.meta, **(meta or {})})
            span.done(outcome)
            return outcome

    async def _call(self, tool: str, args: dict[str, Any], timeout: float | None, on_invoked: OnInvoked | None,
                    meta: Mapping[str, Any] | None) -> CallOutcome:
        info = self.catalog.get(tool)
        if info is None:
            if self.unreachable_servers:
                down = ", ".join(sorted(self.unreachable_servers))
                return CallOutcome(None, ErrorName.TOOL_UNREACHABLE,
                                   f"tool {tool!r} is not available: server(s) {down} unreachable")
            # No configured server serves it: for the caller that is a tool it cannot reach (§14.4).
            return CallOutcome(None, ErrorName.TOOL_UNREACHABLE, f"no MCP server serves tool {tool!r}")
        conn = self._conns[info.server]
        async with conn.reopening:  # concurrent calls must not each replace the connection
            if not conn.alive:
                try:
                    await conn.open()
                except asyncio.CancelledError:
                    raise
                except (Exception, BaseExceptionGroup) as exc:  # connect timeouts, anyio exception groups
                    reason = "no answer while connecting" if isinstance(exc, TimeoutError) else describe_failure(exc)
                    return CallOutcome(None, ErrorName.TOOL_UNREACHABLE, f"server {info.server!r} unreachable: {reason}",
                                       info.server)
        client = conn.client
        assert client is not None
        self_reporting = isinstance(conn.spec, InProcessServer) and conn.spec.reports_invocations
        emit = None if self_reporting else (on_invoked or self.on_invoked)
        record = CallRecord(tool, args, emit)
        limit = self.timeout if timeout is None else timeout
        token = CURRENT_CALL.set(record)
        try:
            return await self._send(conn, client, record, limit, dict(meta) if meta else None)
        finally:
            CURRENT_CALL.reset(token)

    async def _send(self, conn: _Connection, client: Client, record: CallRecord, limit: float,
                    meta: dict[str, Any] | None = None) -> CallOutcome:
        """One `tools/call` under the timeout, classified."""
        import anyio
        from mcp.shared.exceptions import MCPError  # a module, not the package: no fromlist walk per call

        server = conn.name
        try:
            # asyncio's own deadline: anyio's fail_after cost a tenth of skillc's time per call
            # (a cancel scope and an async-library lookup on every call); both raise TimeoutError
            async with asyncio.timeout(limit):
                if meta:
                    result = await client.call_tool(record.tool, record.args, read_timeout_seconds=limit,
                                                    meta=meta)  # type: ignore[arg-type]  # _meta is open
                else:
                    result = await client.call_tool(record.tool, record.args, read_timeout_seconds=limit)
        except MCPError as exc:
            if exc.code == _JSONRPC_REQUEST_TIMEOUT:
                return self._failed(conn, ErrorName.TOOL_TIMEOUT, f"no answer within {limit:g} s")
            if exc.code == _JSONRPC_CONNECTION_CLOSED:
                # The SDK's transports resolve a request whose answer can never come with this
                # code (stdio EOF, an HTTP stream that broke); §14.4 treats an RPC error and an
                # I/O error alike (failed read, uncertain write), so a server's own -32000 loses
                # only its name here.
                return self._transport_failure(conn, record)
            name = ErrorName.MCP_INVALID_PARAMS if exc.code == _JSONRPC_INVALID_PARAMS else ErrorName.MCP_RPC_ERROR
            return CallOutcome(None, name, f"JSON-RPC error {exc.code}: {exc.message}", server)
        except TimeoutError:
            return self._failed(conn, ErrorName.TOOL_TIMEOUT, f"no answer within {limit:g} s")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError):
            return self._transport_failure(conn, record)
        except Exception as exc:
            if record.callback_error is not None:
                raise record.callback_error from None
            return CallOutcome(None, ErrorName.TOOL_ERROR, f"tool call failed: {describe_failure(exc)}", server)
        if record.callback_error is not None:
            raise record.callback_error
        text = content_text(result)
        try:
            response = _response_of(result, text)
        except jsontext.TooDeep as exc:  # read without recursion: refused, the call still completed
            return CallOutcome(None, ErrorName.MCP_TOOL_ERROR if result.is_error else None,
                               "the tool's answer cannot be read", server, unreadable=f"JSON {exc}")
        if result.is_error:
            return CallOutcome(response, ErrorName.MCP_TOOL_ERROR, text or "the tool reported an error", server)
        return CallOutcome(response, None, text, server)

    def _transport_failure(self, conn: _Connection, record: CallRecord) -> CallOutcome:
        """A refused write never reached the server; a connection lost after it did is I/O."""
        if record.refused or not record.sent:
            return self._failed(conn, ErrorName.TOOL_UNREACHABLE,
                                f"server {conn.name!r} unreachable: the request could not be sent")
        return self._failed(conn, ErrorName.TOOL_IO_ERROR, f"connection to {conn.name!r} lost during the call")

    @staticmethod
    def _failed(conn: _Connection, name: str, message: str) -> CallOutcome:
        # The session may be half-broken (a late answer, a dead pipe): reopen before the next call.
        conn.suspect = True
        return CallOutcome(None, name, message, conn.name)

    async def aclose(self) -> None:
        """Close every connection (stopping stdio server processes)."""
        await asyncio.gather(*(c.close() for c in self._conns.values()))

    async def __aenter__(self) -> McpGateway:
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
