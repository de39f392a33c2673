"""Request bodies bounded per route, before a handler reads a byte (docs/SECURITY.md Bodies).

Every route's body is bounded (`[server] body_limit`, per path prefix `[server.body_limits]`). A
request whose `Content-Length` says more is answered 413 at once, unread; one sent without a length
(chunked) is read only up to the limit, then answered 413. The signature headers are checked before
the body is read too (GatewayAuth.precheck), so an anonymous sender costs the service nothing.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillc.runtime.text.idtext import ascii_int
from skillc.runtime.server.errors import ApiError

KIB = 1024
MIB = 1024 * KIB
DEFAULT_LIMIT = 64 * KIB
"""Every route without its own limit (sessions, state, console data: small JSON or none)."""
DEFAULT_ROUTE_LIMITS: Mapping[str, int] = {"/agui": 1 * MIB}
"""An AG-UI run carries the conversation's messages: more room than the REST routes."""


def too_large(limit: int) -> ApiError:
    """The 413 answer for a body past `limit` bytes."""
    return ApiError("BODY_TOO_LARGE", f"the request body is larger than this route's limit of {limit} bytes")


class BodyLimit:
    """ASGI middleware: the body limit of the request's route, enforced on `Content-Length` before
    anything is read and on the bytes received when there is none."""

    def __init__(self, app: ASGIApp, default: int = DEFAULT_LIMIT, routes: Mapping[str, int] | None = None) -> None:
        self.app = app
        self.default = default
        # longest prefix first: "/api/sessions/x" takes "/api/sessions" before "/api"
        self.routes = sorted((dict(DEFAULT_ROUTE_LIMITS if routes is None else routes)).items(),
                             key=lambda kv: -len(kv[0]))

    def limit_of(self, path: str) -> int:
        """The body limit of a request path."""
        for prefix, limit in self.routes:
            if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
                return limit
        return self.default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_of(scope.get("path", ""))
        lengths = [v for k, v in scope.get("headers", ()) if k == b"content-length"]
        if lengths:
            length = ascii_int(lengths[0].decode("latin-1"))
            if length is None or len(lengths) > 1:
                await ApiError("INVALID_INPUT", "Content-Length must be one number of ASCII digits") \
                    .response()(scope, receive, send)
                return
            if length > limit:
                await too_large(limit).response()(scope, receive, send)
                return
        received = 0

        async def bounded() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise too_large(limit)  # the handler's read ends here; the app answers 413
            return message

        await self.app(scope, bounded, send)


def limits_of(table: Mapping[str, Any], where: str) -> tuple[int, dict[str, int]]:
    """`[server] body_limit` and `[server.body_limits]` (path prefix -> bytes), checked; ValueError
    naming the bad value."""
    default = table.get("body_limit", DEFAULT_LIMIT)
    routes = table.get("body_limits", {})
    if not isinstance(default, int) or isinstance(default, bool) or default < 0:
        raise ValueError(f"{where}: [server] body_limit must be a number of bytes, got {default!r}")
    if not isinstance(routes, dict) or not all(
            isinstance(k, str) and k.startswith("/") and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in routes.items()):
        raise ValueError(f"{where}: [server.body_limits] maps a path (\"/agui\") to a number of bytes")
    return default, {**DEFAULT_ROUTE_LIMITS, **routes}
