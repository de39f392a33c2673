"""`create_app(...)`: the Starlette app of `skillc serve`, composed from route modules.

Each route module exposes `routes(ctx) -> list[BaseRoute]`; the console and telemetry plug in the
same way (docs/API.md §9). The lifespan starts the runtime (store, MCP servers, model, studio)
and shuts it down gracefully: running turns reach a stopping point first.
"""
from __future__ import annotations

import contextlib
import importlib
import logging
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillc.runtime.compiled.loader import StudioCompiler
from skillc.runtime.server.auth import DEV_HEADER, GatewayAuth
from skillc.runtime.server.context import ServerContext
from skillc.runtime.server.devmode import DevGuard
from skillc.runtime.server.errors import ApiError
from skillc.runtime.server.limits import BodyLimit
from skillc.runtime.server.options import ServeOptions, read_options
from skillc.runtime.store.base import StoreUnavailable
from skillc.runtime.server.studio_feed import StudioFeed

log = logging.getLogger("skillc.server")
ROUTE_MODULES: tuple[str, ...] = (
    "skillc.runtime.server.health",
    "skillc.runtime.server.agui",
    "skillc.runtime.server.rest",
    "skillc.runtime.server.metrics",
    "skillc.runtime.server.console",
)


def create_app(source: str | os.PathLike[str] | None = None, *, config_path: str | os.PathLike[str] | None = None,
               config: Any = None, options: ServeOptions | None = None,
               route_modules: Sequence[str] | None = None, model: Any = None, gateway: Any = None,
               store: Any = None, servers: Any = None, dev: bool | None = None,
               secret: str | None = None, compiler: StudioCompiler | None = None,
               telemetry: Any = None) -> Starlette:
    """The ASGI app. `source`: a compiled directory, a studio directory/SQLite file, or a studio
    service URL (default: the config's `[studio] source`). `model`/`gateway`/`store` replace what
    the config would open (tests, embedding; a given gateway must be started), `servers` the
    config's MCP servers (e.g. `InProcessServer`s). `compiler` compiles a studio source or service on
    load (`skillc.compile_on_load`, which `skillc serve` passes; none: only a compiled directory
    serves). `telemetry` (`skillc.runtime.telemetry.build(...)`) is installed on the runtime;
    without it, `[telemetry]` and the environment choose (metrics on by default, for
    `GET /metrics`). `app.state.ctx` is the `ServerContext`."""
    from skillc.runtime.outside.config import load_config

    config = config if config is not None else load_config(config_path)
    options = options or read_options(config_path, config=config, dev=dev or None, secret=secret)
    src = str(source) if source is not None else (options.studio_url or config.studio.source)
    store_dir = Path(config.store.path).resolve().parent if config.store.path else Path.cwd()
    feed = StudioFeed(src, store_dir / "compiled", interval=options.studio_refresh, timeout=options.studio_timeout,
                      compiler=compiler)
    auth = GatewayAuth(secret=options.secret, skew=options.clock_skew, dev=options.dev,
                       hidden=tuple(config.settings.platform_hidden), dev_identity=options.dev_identity)
    ctx = ServerContext(config=config, options=options, feed=feed, auth=auth, model=model, gateway=gateway,
                        store=store, servers=servers, telemetry=telemetry)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await ctx.start()
        try:
            yield
        finally:
            await ctx.stop()

    app = Starlette(routes=_compose(ctx, route_modules or ROUTE_MODULES), lifespan=lifespan,
                    exception_handlers={ApiError: _api_error, HTTPException: _http_error,
                                        StoreUnavailable: _store_unavailable, Exception: _internal})
    app.state.ctx = ctx
    app.add_middleware(BodyLimit, default=options.body_limit, routes=options.body_limits)
    if options.cors_origins:
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(options.cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["*"], expose_headers=["X-Skillc-Auth"])
    if options.dev:
        app.add_middleware(DevGuard, origins=options.cors_origins)
        app.add_middleware(_DevHeader)
    return app


def _compose(ctx: ServerContext, modules: Sequence[str]) -> list[BaseRoute]:
    routes: list[BaseRoute] = []
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue  # a route module not installed (yet): the rest still serves
            raise
        factory = getattr(module, "routes", None)
        if factory is None:
            log.warning("route module %s has no routes(ctx); skipped", name)
            continue
        routes.extend(factory(ctx))
    return routes


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}.get(exc.status_code, "INVALID_INPUT")
    return ApiError(code, str(exc.detail), status=exc.status_code).response()


async def _store_unavailable(request: Request, exc: Exception) -> Response:
    """The database is down or does not answer in time: the caller may try again (nothing of the
    unit was kept), which a 500 would not say."""
    log.warning("store unavailable on %s %s: %s", request.method, request.url.path, exc)
    return ApiError("STORE_UNAVAILABLE", "the session store is not answering; nothing was changed, "
                                         "try again in a moment").response(headers={"Retry-After": "5"})


async def _internal(request: Request, exc: Exception) -> Response:
    log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return ApiError("INTERNAL", f"internal error: {type(exc).__name__}").response()


class _DevHeader:
    """Development mode says so on every response (`X-Skillc-Auth: dev-insecure`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + [(DEV_HEADER[0].lower().encode(), DEV_HEADER[1].encode())]
            await send(message)

        await self.app(scope, receive, stamped)
