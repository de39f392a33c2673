"""Development mode kept to the developer's own browser (docs/SECURITY.md Development mode).

`--dev-insecure` checks no signature, so whatever can send it a request acts as the dev identity.
A web page on another site can make the browser send one (a `text/plain` form POST needs no CORS
preflight), and a DNS name re-bound to 127.0.0.1 makes the browser treat the service as that
site's own. So in development mode a request is served only when it is addressed to a loopback
`Host`, comes from the same origin (or a configured `cors_origins` one) when the browser says
where it comes from, and, unless it is a GET or HEAD, carries a JSON content type (which a page
on another origin cannot send without a preflight this service never grants).
"""
from __future__ import annotations

from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

from skillc.runtime.server.errors import ApiError

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})  # no body (a CORS preflight is OPTIONS)
_SAME_SITE = frozenset({"same-origin", "none"})


def host_name(host: str) -> str:
    """The name part of a `Host` header value: `[::1]:8765` -> `::1`, `Localhost:80` -> `localhost`."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def loopback(host: str) -> bool:
    """True for a `Host` that names this machine's loopback interface."""
    name = host_name(host)
    return name in LOOPBACK_HOSTS or name.endswith(".localhost")


def json_type(content_type: str) -> bool:
    """True for `application/json` (any parameters) and `application/*+json`."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class DevGuard:
    """ASGI middleware of development mode: loopback `Host`, same origin, JSON bodies."""

    def __init__(self, app: ASGIApp, origins: Iterable[str] = ()) -> None:
        self.app = app
        self.origins = frozenset(o.rstrip("/") for o in origins)

    def refusal(self, scope: Scope) -> ApiError | None:
        """Why a request is not served in development mode, or None."""
        headers: dict[bytes, bytes] = {}
        for key, value in scope.get("headers", ()):
            headers.setdefault(key, value)
        host = headers.get(b"host", b"").decode("latin-1")
        if not loopback(host):
            return ApiError("DEV_HOST_REFUSED", "development mode serves only a loopback Host "
                            "(localhost, 127.0.0.1, [::1]); sign requests to serve other names")
        origin = headers.get(b"origin", b"").decode("latin-1").rstrip("/")
        same = {f"{scope.get('scheme', 'http')}://{host.strip().lower()}"}
        if origin and origin.lower() not in same and origin not in self.origins:
            return ApiError("DEV_ORIGIN_REFUSED", f"development mode serves only its own origin, not {origin[:200]}")
        site = headers.get(b"sec-fetch-site", b"").decode("latin-1").lower()
        if site and site not in _SAME_SITE and not (origin and origin in self.origins):
            return ApiError("DEV_ORIGIN_REFUSED", f"development mode serves only its own origin (Sec-Fetch-Site: {site[:40]})")
        if scope.get("method", "GET") not in _SAFE_METHODS \
                and not json_type(headers.get(b"content-type", b"").decode("latin-1")):
            return ApiError("UNSUPPORTED_MEDIA_TYPE", "development mode takes only application/json request bodies")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = self.refusal(scope)
            if refused is not None:
                await refused.response()(scope, receive, send)
                return
        await self.app(scope, receive, send)
