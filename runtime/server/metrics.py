"""`GET /metrics`: Prometheus text, rendered by the telemetry module when it offers a renderer.

The telemetry room owns the metrics; this route only finds `render_prometheus()` in
`skillc.runtime.telemetry` (looked up at request time, so installing it needs no change here).
"""
from __future__ import annotations

import importlib

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from skillc.runtime.server.context import ServerContext
from skillc.runtime.server.errors import ApiError

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def routes(ctx: ServerContext) -> list[BaseRoute]:
    """The metrics route."""

    async def metrics(request: Request) -> Response:
        try:
            render = getattr(importlib.import_module("skillc.runtime.telemetry"), "render_prometheus", None)
        except ImportError:
            render = None
        if render is None:
            raise ApiError("METRICS_DISABLED", "no metrics renderer is installed")
        return PlainTextResponse(render(), media_type=CONTENT_TYPE)

    return [Route("/metrics", metrics, methods=["GET"])]
