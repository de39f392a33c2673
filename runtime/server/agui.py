"""`POST /agui` (AG-UI 1.0 `RunAgentInput` in, SSE out) and `GET /agui/runs/{runId}` (docs/API.md §2-4)."""
from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import Message, RunAgentInput
from pydantic import Field, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from skillc.runtime import telemetry
from skillc.runtime.text.idtext import ascii_int
from skillc.runtime.server.context import ServerContext
from skillc.runtime.server.errors import ApiError
from skillc.runtime.server.run_stream import RunStream
from skillc.runtime.server.runs import RunLog
from skillc.runtime.server.traces import check_id


class RunInput(RunAgentInput):
    """A `RunAgentInput` whose `messages` may be left out: a run that only answers an interrupt
    (`resume`) has no new message to send, and `messages` is not read then (docs/API.md)."""

    messages: list[Message] = Field(default_factory=list)


def routes(ctx: ServerContext) -> list[BaseRoute]:
    """The AG-UI routes."""

    async def run(request: Request) -> Response:
        # the signature is checked first; the nonce is claimed in the session's first store call
        # (before anything is done for the request), or alone where there is none
        identity, claim = await ctx.verify(request)
        try:
            data = RunInput.model_validate_json(await request.body())
        except ValidationError as exc:
            raise ApiError("INVALID_INPUT", f"not an AG-UI RunAgentInput: {exc.errors()[0]['msg']} "
                           f"at {'.'.join(str(p) for p in exc.errors()[0]['loc'])}") from None
        check_id(data.thread_id, "threadId")
        check_id(data.run_id, "runId")
        known = ctx.runs.get(data.run_id)
        if known is not None:
            await ctx.claim(claim)
            return _replay(request, ctx, known, identity.owner, data.thread_id)
        # the run's task copies the context it is created in: a caller's traceparent is its parent
        with telemetry.caller_context(ctx.telemetry, request.headers):
            run_log = await ctx.start_run(identity, data.thread_id, data.run_id, last_user_message(data.messages),
                                          list(data.resume or []), agent=picked_agent(data.forwarded_props),
                                          claim=claim)
        return stream(run_log, 0)

    async def again(request: Request) -> Response:
        identity = await ctx.identify(request)
        known = ctx.runs.get(check_id(request.path_params["run_id"], "a runId"))
        if known is None:
            raise ApiError("RUN_NOT_FOUND", "no such run in this process (its trace has the record)")
        return _replay(request, ctx, known, identity.owner, None)

    return [Route("/agui", run, methods=["POST"]), Route("/agui/runs/{run_id}", again, methods=["GET"])]


def picked_agent(props: Any) -> str | None:
    """`forwardedProps.agent`: the agent code the user picked (the console's picker), or None."""
    agent = props.get("agent") if isinstance(props, dict) else None
    if agent is None or agent == "":
        return None
    if not isinstance(agent, str):
        raise ApiError("INVALID_INPUT", "forwardedProps.agent must be an agent code (a string)")
    return agent


def _replay(request: Request, ctx: ServerContext, known: RunLog, owner: str, thread_id: str | None) -> Response:
    if known.owner != owner:
        raise ApiError("SESSION_FORBIDDEN", "this run belongs to another caller")
    if thread_id is not None and known.thread_id != thread_id:
        raise ApiError("RUN_ID_CONFLICT", f"runId {known.run_id} was used on another thread")
    last = request.headers.get("last-event-id", "")
    if not last.strip():
        return stream(known, 0)
    seen = ascii_int(last.strip())
    if seen is None:
        raise ApiError("INVALID_INPUT", "Last-Event-ID must be an event id (ASCII digits, at most 18)")
    return stream(known, seen + 1)


def stream(run: RunLog, start: int) -> Response:
    """The run's events from `start` as Server-Sent Events, live until it ends
    (runtime/server/run_stream.py)."""
    response: Response = RunStream(run, start)
    return response


def last_user_message(messages: list[Any]) -> tuple[str, str] | None:
    """(id, text) of the last user message; text parts are joined."""
    for msg in reversed(messages):
        if getattr(msg, "role", None) != "user":
            continue
        content = msg.content
        if not isinstance(content, str):
            content = "".join(getattr(part, "text", "") or "" for part in content)
        return (msg.id, content) if content.strip() else None
    return None
