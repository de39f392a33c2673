"""REST beside AG-UI (docs/API.md §5): open and list the caller's sessions, pending, state, trace."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from skillc.runtime.words.event_types import as_event
from skillc.runtime.words.events import EventName
from skillc.runtime.text import border
from skillc.runtime.text.idtext import ascii_int
from skillc.runtime.server.context import ServerContext
from skillc.runtime.server.errors import ApiError
from skillc.runtime.store import offloop
from skillc.runtime.server.traces import check_id
from skillc.runtime.outside.redact import mask_args


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def masked(lines: Iterable[str], studio: Any, after: int = 0) -> Iterator[str]:
    """Trace lines (seq > after) for a front end: `mcp.invoked` arguments with the contract's
    sensitive values as "***", like `tool.call` already has them (the audit file itself is left as
    written). A call whose node's skill is unknown gets every skill's sensitive paths for its tool."""
    skills: dict[tuple[Any, Any], str] = {}
    for line in lines:
        raw = json.loads(line)
        event = as_event(raw)
        if event is None:
            pass  # not an event this version knows: passed on as written
        elif event["type"] == EventName.TASK_PLANNED:
            for n in event.get("nodes") or []:
                skills[(event.get("task"), n.get("node"))] = n.get("skill")
        elif event["type"] == EventName.NODE_STARTED:
            skills[(event.get("task"), event.get("node"))] = event.get("skill")
        elif event["type"] == EventName.MCP_INVOKED and isinstance(event.get("args"), dict):
            key = skills.get((event.get("task"), event.get("node")))
            modules = [studio.skills[key]] if key in studio.skills else list(studio.skills.values())
            paths = [a.parts for m in modules for t in [getattr(m, "TOOLS", {}).get(event.get("tool"))]
                     if t is not None for a in t.args.values() if a.sensitive]
            if paths:
                event["args"] = mask_args(event["args"], paths)
                line = json.dumps(event, ensure_ascii=False) + "\n"
        if int(raw.get("seq") or 0) > after:
            yield line


def routes(ctx: ServerContext) -> list[BaseRoute]:
    """The REST routes under /api."""

    async def open_session(request: Request) -> Response:
        identity = await ctx.identify(request)
        raw = await request.body()
        try:
            body = border.parse(raw) if raw.strip() else {}
        except border.Refused as exc:  # not JSON, not UTF-8, too deep: told, never a 500
            raise ApiError("INVALID_INPUT", f"the body must be a JSON object: {exc}") from None
        if not isinstance(body, dict):
            raise ApiError("INVALID_INPUT", "the body must be a JSON object")
        sid = body.get("id")
        if sid is None:
            session = await ctx.runtime.open_session(dict(identity.platform))
            ctx.adopt(session)
        else:
            check_id(sid, "id")  # before the store or a file sees it
            if await offloop.call(ctx.runtime.store, ctx.runtime.store.version_of, sid) != 0:
                raise ApiError("SESSION_EXISTS", f"session {sid} already exists")
            session = await ctx.session(identity, sid, create=True)
        return JSONResponse({"id": session.id, "state": _jsonable(session.state())}, status_code=201)

    async def list_sessions(request: Request) -> Response:
        identity = await ctx.identify(request)
        return JSONResponse({"sessions": await ctx.sessions_of(identity)})

    async def _session(request: Request) -> Any:
        identity = await ctx.identify(request)
        return await ctx.session(identity, request.path_params["sid"])

    async def get_session(request: Request) -> Response:
        session = await _session(request)
        return JSONResponse({"id": session.id, "state": _jsonable(session.state())})

    async def get_state(request: Request) -> Response:
        session = await _session(request)
        return JSONResponse(_jsonable(session.state()))

    async def get_pending(request: Request) -> Response:
        session = await _session(request)
        return JSONResponse({"pending": _jsonable(session.pending()), "interrupt": ctx.interrupt_of(session)})

    async def get_trace(request: Request) -> Response:
        session = await _session(request)
        after = ascii_int(request.query_params.get("after", "0"))
        if after is None:
            raise ApiError("INVALID_INPUT", "after must be a trace seq (ASCII digits, at most 18)")
        lines = list(masked(ctx.traces.read(session.id), ctx.runtime.studio, after))
        return StreamingResponse(iter(lines), media_type="application/x-ndjson")

    return [
        Route("/api/sessions", open_session, methods=["POST"]),
        Route("/api/sessions", list_sessions, methods=["GET"]),
        Route("/api/sessions/{sid}", get_session, methods=["GET"]),
        Route("/api/sessions/{sid}/state", get_state, methods=["GET"]),
        Route("/api/sessions/{sid}/pending", get_pending, methods=["GET"]),
        Route("/api/sessions/{sid}/trace", get_trace, methods=["GET"]),
    ]
