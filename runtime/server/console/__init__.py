"""The web console of `skillc serve`: static pages and small ES modules, plus the few REST routes
the console needs that the rest of the API lacks (docs/API.md section 5, docs/console.md).

A route module of the server (docs/API.md section 9): `routes(ctx)` returns the console's routes.

- `/console/…`: the assets (no build step, nothing loaded from other hosts). They hold no data, so
  they are served without identity; every data route below asks `ctx.identify` like the API does.
- `GET /api/me`: the caller as the server identified it, and whether development mode is on (the
  console shows a banner then).
- `GET /api/sessions/{sid}/evidence`: the session's evidence with the values the contract extracted
  (the trace's call events carry the observation, not the extraction by key).
- `GET /api/studio`, `/api/studio/skills/{key}`, `/api/studio/agents/{code}/graph`: the loaded
  studio, one contract's per-argument table, one agent's task-graph template (studio_view.py;
  built from the compiled modules, never from the compiler).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from skillc.runtime.server.console import studio_view
from skillc.runtime.store import offloop

STATIC = Path(__file__).resolve().parent / "static"


# Everything comes from this server, nothing else may run: no inline script or style, no other
# host (the console works on closed networks, and a value a model wrote can never become code).
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


class _Assets(StaticFiles):
    """The console's files, always revalidated (a redeployed console is never half old, half new)
    and under a strict Content-Security-Policy."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers["Cache-Control"] = "no-cache"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Content-Security-Policy"] = CSP
        response.headers["Referrer-Policy"] = "no-referrer"
        return response


def _dev_mode(ctx: Any, identity: Any) -> bool:
    """Whether the server runs without signature checks (docs/API.md section 1): the identity
    says so, or the server's authenticator does."""
    if getattr(identity, "dev", False) is True:
        return True
    return getattr(getattr(ctx, "auth", None), "dev", False) is True or getattr(ctx, "dev_mode", False) is True


def routes(ctx: Any) -> list[BaseRoute]:
    """The console's routes for `create_app` (assets under /console, data routes under /api)."""

    def studio() -> Any:
        return ctx.runtime.studio

    def not_found(message: str) -> Exception:
        from skillc.runtime.server.errors import ApiError

        return ApiError("NOT_FOUND", message)

    async def me(request: Request) -> JSONResponse:
        identity = await ctx.identify(request)
        return JSONResponse({"platform": identity.platform, "owner": identity.owner,
                             "dev_mode": _dev_mode(ctx, identity)})

    async def studio_index(request: Request) -> JSONResponse:
        await ctx.identify(request)
        return JSONResponse(studio_view.studio_index(studio()))

    async def skill(request: Request) -> JSONResponse:
        await ctx.identify(request)
        key = request.path_params["key"]
        module = studio().skills.get(key)
        if module is None:
            raise not_found(f"no loadable skill {key!r} in the studio")
        return JSONResponse(studio_view.skill_view(module, studio_view.manifest_of(studio())))

    async def agent_graph(request: Request) -> JSONResponse:
        await ctx.identify(request)
        code = request.path_params["code"]
        template = studio().agents.get(code)
        if template is None:
            raise not_found(f"no agent {code!r} in the studio")
        return JSONResponse(studio_view.agent_graph(template))

    async def evidence(request: Request) -> JSONResponse:
        identity = await ctx.identify(request)
        sid = request.path_params["sid"]
        await ctx.session(identity, sid)  # 403 for another caller's session, 404 for none
        records = await offloop.call(ctx.runtime.store, ctx.runtime.store.evidence_of, sid)
        return JSONResponse({"evidence": [studio_view.evidence_view(ev) for ev in records]})

    async def to_console(request: Request) -> RedirectResponse:
        return RedirectResponse("/console/", status_code=307)

    return [
        Route("/api/me", me, methods=["GET"]),
        Route("/api/studio", studio_index, methods=["GET"]),
        Route("/api/studio/skills/{key}", skill, methods=["GET"]),
        Route("/api/studio/agents/{code}/graph", agent_graph, methods=["GET"]),
        Route("/api/sessions/{sid}/evidence", evidence, methods=["GET"]),
        Route("/console", to_console, methods=["GET"]),
        Mount("/console", app=_Assets(directory=STATIC, html=True), name="console"),
    ]
