"""`skillc serve`'s start: a configuration error is one line on stderr and exit status 2.

The runtime opens its store, MCP servers, model and studio in the app's lifespan, under uvicorn,
whose own handling of a failed startup prints a traceback and exits 3. `StartupGuard` keeps such
an error instead (uvicorn is told the startup failed, without the traceback), and `serve` prints
one line per problem: each tool-name clash between MCP servers, the model setting that is
missing, the store that cannot be opened. The socket is bound before uvicorn starts, so a port in
use is said the same way. An exception that is not a configuration problem (a bug) keeps
uvicorn's traceback.
"""
from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillc.runtime.words.errors import SkillcError

_UVICORN_FAILED = "Application startup failed. Exiting."


def is_configuration_error(exc: BaseException) -> bool:
    """What a user fixes in the config or the environment, not in the code."""
    return isinstance(exc, (SkillcError, ValueError, OSError))


def error_lines(exc: BaseException) -> list[str]:
    """The problems of a failed start, one line each."""
    from skillc.runtime.mcp.gateway import GatewayConfigError

    if isinstance(exc, GatewayConfigError):  # one line per clash, as check --servers reports them (SC605)
        return [f"MCP servers cannot form one catalog: {part}" for part in str(exc).split("; ")]
    text = " ".join(str(exc).split()) or type(exc).__name__
    return [text]


class StartupGuard:
    """ASGI wrapper: a configuration error raised by the lifespan's startup is kept in `errors`
    and reported to uvicorn as a failed startup with no traceback."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.errors: list[str] = []
        logging.getLogger("uvicorn.error").addFilter(self._quiet)

    def _quiet(self, record: logging.LogRecord) -> bool:
        # uvicorn's own "startup failed" line: serve says what failed instead
        return not (self.errors and record.getMessage() == _UVICORN_FAILED)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        kept: list[Message] = []

        async def quiet_send(message: Message) -> None:
            if message["type"] == "lifespan.startup.failed":
                kept.append(message)
                message = {"type": "lifespan.startup.failed", "message": ""}
            await send(message)

        try:
            await self.app(scope, receive, quiet_send)
        except BaseException as exc:
            if not (kept and is_configuration_error(exc)):
                if kept:  # a bug: the traceback the app made, as uvicorn would have logged it
                    logging.getLogger("uvicorn.error").error(kept[0].get("message", ""))
                raise
            self.errors.extend(error_lines(exc))


def listen(host: str, port: int) -> socket.socket:
    """A bound, listening socket for uvicorn (OSError when the address is taken or not ours)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) on an accepted
    # connection only when its listening socket says TCP, and with Nagle a run's last write waited
    # for the client's delayed ACK, about 40 ms on every run.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def describe_listen_error(host: str, port: int, exc: OSError) -> str:
    """The one line for a socket that cannot be bound."""
    return f"cannot listen on {host}:{port}: {exc.strerror or exc}"


def serve(app: Any, host: str, port: int, on_listen: Callable[[str], None] | None = None,
          **options: Any) -> list[str]:
    """Run the app under uvicorn until it stops; the configuration errors that stopped its start
    (empty when it ran). `on_listen` gets the bound address (`host:port`, the real port when 0)."""
    import uvicorn

    try:
        sock = listen(host, port)
    except OSError as exc:
        return [describe_listen_error(host, port, exc)]
    if on_listen is not None:
        bound = sock.getsockname()
        on_listen(f"[{bound[0]}]:{bound[1]}" if sock.family == socket.AF_INET6 else f"{bound[0]}:{bound[1]}")
    guard = StartupGuard(app)
    server = uvicorn.Server(uvicorn.Config(guard, lifespan="on", **options))
    try:
        server.run(sockets=[sock])
    except SystemExit:
        if not guard.errors:  # not a configuration error: uvicorn's own exit stands
            raise
    finally:
        sock.close()
    return guard.errors
