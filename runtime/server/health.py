"""`GET /healthz` (the process answers) and `GET /readyz` (store, MCP servers, studio; no auth)."""
from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from skillc.runtime.server.context import ServerContext


def routes(ctx: ServerContext) -> list[BaseRoute]:
    """The health routes."""

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        report = await ctx.readiness()
        return JSONResponse(report, status_code=200 if report["ready"] else 503)

    return [Route("/healthz", healthz, methods=["GET"]), Route("/readyz", readyz, methods=["GET"])]
