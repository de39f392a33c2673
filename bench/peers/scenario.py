"""The one turn every peers driver plays, and the line a driver reports it on (stdlib only).

Every framework runs the same turn: the prompt goes to a model double that asks for `CALLS` tool
calls of `TOOL`, one per model step, then answers `FINAL` as text; the tool answers `RESULT`, a
small fixed JSON object, at once. No sleeps anywhere. Drivers run in their framework's own venv
(skillc is not installed there), so this module imports nothing outside the standard library.

What a driver keeps of each turn is `--persist`: `none` (nothing, the peers as shipped),
`sqlite` (the framework's own persistence on a SQLite file in a temporary folder: skillc's store,
LangGraph's checkpointer, the Agents SDK's session, Pydantic AI's message history), or `memory`
(skillc's store on a `:memory:` database: the same work without the file, the file's share).

A driver measures `--turns` turns after `--warmup` uncounted ones. For each turn it takes the wall
time of the turn and subtracts the time spent inside the model double and inside the tool (as the
driver's own clocks saw it); what is left, divided by the calls, is the framework's overhead per
tool call. It prints one `PEER-RESULT {json}` line: the median of its turns and every sample.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

TOOL = "cms_article_get"
TOOL_DOC = "Read one article by its id."
RESULT: dict[str, Any] = {"code": 200, "data": {"id": 17, "title": "Spring launch"}}
FINAL = "read"
PROMPT = "read article 17 and 18"
CALLS = 5
MARK = "PEER-RESULT "
# What a turn leaves behind (`--persist`).
NONE, SQLITE, MEMORY = "none", "sqlite", "memory"
PERSIST = (NONE, SQLITE, MEMORY)


def call_args(step: int) -> dict[str, Any]:
    """The arguments of the `step`-th tool call (0-based): articles 17 and 18 in turn."""
    return {"articleId": 17 + step % 2}


def tool_result(articleId: int) -> dict[str, Any]:  # noqa: N803  (the tool's argument name)
    """What the tool answers: the same small JSON object whatever it is asked."""
    return RESULT


class Clock:
    """Seconds spent inside the model double and inside the tools over a turn, and the tool calls.

    Tool time is taken where the framework hands the call to the tool: the plain function in the
    direct mode, the MCP SDK's `ClientSession.call_tool` over MCP (every framework's MCP client,
    and skillc's gateway, go through it), so it covers the same round trip for everyone.
    """

    def __init__(self) -> None:
        self.model = 0.0
        self.tool = 0.0
        self.calls = 0

    def reset(self) -> None:
        """Start a new turn."""
        self.model = self.tool = 0.0
        self.calls = 0

    def timed_model(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn` (the model double's step, a plain function) adding its wall time to the model's."""

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.model += time.perf_counter() - start

        return wrapper

    def timed_model_async(self, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        """`fn` (a coroutine function) adding its wall time to the model's."""

        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.model += time.perf_counter() - start

        return wrapper

    def timed_tool_async(self, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        """`fn` (a coroutine function: an SDK's call) counted as a tool call, its time the tool's."""

        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            start = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.tool += time.perf_counter() - start

        return wrapper

    def tool_function(self) -> Callable[..., Awaitable[dict[str, Any]]]:
        """The direct mode's tool: a plain async function with a real signature (frameworks read
        it for the schema), timing itself. Async, so no framework hops to a thread for it."""
        clock = self

        async def cms_article_get(articleId: int) -> dict[str, Any]:  # noqa: N803
            """Read one article by its id."""
            clock.calls += 1
            start = time.perf_counter()
            try:
                return tool_result(articleId)
            finally:
                clock.tool += time.perf_counter() - start

        return cms_article_get

    def timed_stream(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn` (an async generator function: a streaming model double) adding the time spent
        producing each item to the model's."""
        clock = self

        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            items = fn(*args, **kwargs).__aiter__()
            while True:
                start = time.perf_counter()
                try:
                    item = await items.__anext__()
                except StopAsyncIteration:
                    return
                finally:
                    clock.model += time.perf_counter() - start
                yield item

        return wrapper

    def totals(self) -> bytes:
        """The clock so far, as the served apps' `/bench/clock` answers it (JSON)."""
        return json.dumps({"model": self.model, "tool": self.tool, "calls": self.calls}).encode()

    def instrument_mcp(self, session_class: Any) -> None:
        """Time (and count) every `call_tool` of the MCP SDK's client session class."""
        session_class.call_tool = self.timed_tool_async(session_class.call_tool)


async def measure(turn: Callable[[], Awaitable[Any]], clock: Clock, calls: int, turns: int,
                  warmup: int) -> list[float]:
    """Overhead per tool call of `turns` turns (after `warmup` uncounted ones)."""
    samples: list[float] = []
    for i in range(warmup + turns):
        clock.reset()
        start = time.perf_counter()
        await turn()
        wall = time.perf_counter() - start
        if clock.calls != calls:
            raise SystemExit(f"the turn made {clock.calls} tool calls, not {calls}")
        if i >= warmup:
            samples.append((wall - clock.model - clock.tool) / calls)
    return samples


CLOCK_PATH = "/bench/clock"  # a served app's model and tool time so far (served.py takes it out)


def with_clock(app: Any, clock: Clock) -> Any:
    """The ASGI `app` answering `CLOCK_PATH` itself with `clock`'s totals (before any auth of the
    app: the bench asks it between turns, outside the timed window)."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != CLOCK_PATH:
            return await app(scope, receive, send)
        body = clock.totals()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    return wrapped


def next_step(tool_results: int, calls: int) -> dict[str, Any] | None:
    """The model double's decision: the arguments of the next tool call, or None for the final text."""
    return call_args(tool_results) if tool_results < calls else None


def report(samples: list[float], **extra: Any) -> None:
    """Print the driver's one result line (seconds)."""
    print(MARK + json.dumps({"median": statistics.median(samples), "samples": samples, **extra}), flush=True)


def parse_report(stdout: str) -> dict[str, Any]:
    """The result a driver printed; ValueError when it printed none."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARK):
            result: dict[str, Any] = json.loads(line[len(MARK):])
            return result
    raise ValueError("the driver printed no " + MARK.strip() + " line")


def arguments(description: str, modes: tuple[str, ...] = ("direct", "mcp"),
              persists: tuple[str, ...] = (NONE, SQLITE)) -> argparse.Namespace:
    """The command line every driver takes (`persists`: its `--persist` choices, the first the default)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--mode", choices=modes, required=True)
    parser.add_argument("--persist", choices=persists, default=persists[0], help="what each turn keeps")
    parser.add_argument("--calls", type=int, default=CALLS, help="tool calls per turn")
    parser.add_argument("--turns", type=int, default=20, help="measured turns")
    parser.add_argument("--warmup", type=int, default=3, help="uncounted turns first")
    parser.add_argument("--server", help="the stdio MCP server's command line, as a JSON list (mode mcp)")
    parser.add_argument("--port", type=int, help="the loopback port to serve on (mode serve)")
    return parser.parse_args()


def exit_on_sigterm() -> None:
    """Make SIGTERM a normal exit (atexit handlers run: a served app's temporary folder goes).
    uvicorn hands the signal back to the handler it found once it has shut down."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))


def run_driver(doc: str, in_process: Callable[..., Awaitable[list[float]]],
               serve: Callable[[int, int, str], None] | None = None,
               persists: tuple[str, ...] = (NONE, SQLITE)) -> int:
    """Every driver's `main`: one measurement (or, with `serve`, the served app) as the command
    line says, the result line printed for the orchestrator."""
    modes = ("direct", "mcp", "serve") if serve is not None else ("direct", "mcp")
    args = arguments(doc.splitlines()[0], modes, persists)
    if args.mode == "serve" and serve is not None:
        exit_on_sigterm()
        serve(args.port, args.calls, args.persist)
        return 0
    server_cmd = json.loads(args.server) if args.server else None
    report(asyncio.run(in_process(args.mode, args.calls, args.turns, args.warmup, server_cmd, args.persist)),
           persist=args.persist)
    return 0
