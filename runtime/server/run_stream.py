"""A run's events as a Server-Sent Events response (an ASGI app), written in as few writes as it can.

Every write wakes the client, and on loopback a woken client takes the core from the server: a
served turn that went out as seven writes (the headers, five batches, the end) waited for its
client seven times. Here a batch waits for the run a moment (`runs.LINGER`, or until it ends),
the headers go with the first batch, and a run that ends within the linger goes out as the
headers and one body with its length (`content-length`: the server writes no chunked end after
it, one write fewer, and the client reads a length, not chunks). The reply's acknowledgement (a store write) comes
after the end of the response, so the client does not wait for it; the server orders it before
the session's next run (`ServerContext.start_run`), and a next turn on another worker waits for it
(runtime/durable.py, `ACK_HOLD`).

No task group and no listener task per response: the client's going away is watched by one
`receive()` started when the response starts; a client gone before the end acknowledges nothing.
"""
from __future__ import annotations

import asyncio

from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from skillc.runtime.server.runs import LINGER, RunLog, sse_frames

SSE_HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache"),
               (b"x-accel-buffering", b"no")]
KEEPALIVE = 15.0  # seconds of quiet before a keep-alive comment


class RunStream(Response):
    """The run's events from `start` as SSE, live until it ends; `linger` as `RunLog.follow`. A
    `Response` for the routes' sake; it writes its own messages (no body is rendered)."""

    media_type = "text/event-stream"

    def __init__(self, run: RunLog, start: int, linger: float = LINGER, keepalive: float = KEEPALIVE) -> None:
        self.status_code = 200
        self.background = None
        self.run = run
        self.start = start
        self.linger = linger
        self.keepalive = keepalive

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        run = self.run
        gone = asyncio.get_running_loop().create_task(_disconnect(receive))
        gone.add_done_callback(lambda _: run.wake())  # a follower waiting on a quiet run sees it at once
        started = False
        try:
            last = b""  # the run's last batch, written with the end of the response
            async for first, batch in run.follow(self.start, idle=self.keepalive, linger=self.linger):
                if gone.done():
                    return  # the client went away: the run goes on, nothing is acknowledged
                frames = sse_frames(first, batch).encode()
                if run.done and first + len(batch) == len(run.events):
                    last = frames
                    break
                if not started:
                    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
                    started = True
                await send({"type": "http.response.body", "body": frames, "more_body": True})
            if gone.done():
                return
            if not started:  # the whole response is known: its length, so no chunked end is written
                await send({"type": "http.response.start", "status": 200,
                            "headers": [*SSE_HEADERS, (b"content-length", str(len(last)).encode())]})
            await send({"type": "http.response.body", "body": last, "more_body": False})
        finally:
            gone.cancel()
        await run.acknowledged()  # every frame was handed to the client's connection


async def _disconnect(receive: Receive) -> Message:
    """The request's next message once its body was read: `http.disconnect` (the client went
    away, or the response is complete)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return message
