"""The served mode of the peers turn: one loopback AG-UI client against a framework's app.

Starts the app (`skillc_driver.py --mode serve` or `pydantic_ai_driver.py --mode serve`, each in
its own interpreter) on a free 127.0.0.1 port, waits for /healthz, then plays `--warmup` uncounted
and `--turns` counted turns one after the other: a signed (skillc) or plain (Pydantic AI) POST
/agui with a new thread each turn, the SSE stream read to RUN_FINISHED. The client is the same
code for both apps; signing happens before the clock starts. The figure per turn is the client's
wall time less the time the app spent in its model double and its tools, divided by the tool
calls (the stream's TOOL_CALL_START events of the tool, checked against the app's clock): the
same overhead the direct and mcp modes measure. The app's clock (`scenario.with_clock`, asked
before and after each turn, outside the timed window) is the drivers' own: skillc's time inside
the MCP SDK's `ClientSession.call_tool` (its tool is the canned MCP server in its process, which
cost about 40 % of its served CPU; it was once assumed to take microseconds, as Pydantic AI's
function tool does) and its model double; Pydantic AI's tool function and its streaming model
double. The raw figure, nothing taken out, is reported beside it (`raw`).
The client is bench/serve.py's lean HTTP/1.1 one (`LoopbackHttp`, `--client lean`, the default)
or httpx (`--client httpx`): httpx spends about 1.5 ms of CPU per turn, the same on both sides,
which the figure would otherwise count as each framework's.

    python bench/peers/served.py --app '["python", "bench/peers/skillc_driver.py", "--mode", "serve"]' --sign
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scenario  # noqa: E402

PLATFORM = {"userId": 7, "name": "bench"}


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[bytes], limit: float = 120.0) -> None:
    """Until the app's /healthz answers 200, the child alive, within `limit` seconds."""
    import httpx

    end = time.monotonic() + limit
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"the app exited with {proc.returncode}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)  # polling a child's socket: there is no state to wait on
    raise SystemExit("the app did not come up")


async def play(url: str, sign: bool, calls: int, turns: int, warmup: int, client: str = "lean",
               raw: list[float] | None = None) -> list[float]:
    """Overhead per tool call of `turns` turns after `warmup`: the client's wall time less the
    app's time in its model double and its tools, as the app's clock (`scenario.CLOCK_PATH`,
    asked before and after each turn, outside the timed window) says; `raw` gets the client's
    wall time per call, nothing taken out."""
    secret = None
    if sign:
        from skillc.runtime.server.auth import sign_request

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from skillc_driver import SECRET as secret

    samples: list[float] = []
    post = _lean_post(url) if client == "lean" else _httpx_post(url)
    async with post as (send, send_clock):
        for i in range(warmup + turns):
            body = json.dumps({"threadId": f"t{i}", "runId": f"r{i}", "state": {}, "tools": [], "context": [],
                               "forwardedProps": {},
                               "messages": [{"id": f"m{i}", "role": "user", "content": scenario.PROMPT}]}).encode()
            headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
            if secret is not None:
                headers.update(sign_request(secret, "POST", "/agui", body, PLATFORM))
            before = json.loads((await send_clock(b"", {}))[1])
            started = time.perf_counter()
            status, stream = await send(body, headers)
            wall = time.perf_counter() - started
            after = json.loads((await send_clock(b"", {}))[1])
            if status != 200:
                raise SystemExit(f"POST /agui answered {status}: {stream[:300]!r}")
            last, tool_calls = "", 0
            for line in stream.decode().splitlines():
                if line.startswith("data:"):
                    last = line
                    if '"TOOL_CALL_START"' in line and scenario.TOOL in line:
                        tool_calls += 1
            if '"RUN_FINISHED"' not in last or tool_calls != calls:
                raise SystemExit(f"turn {i}: {tool_calls} tool calls, last event {last[:200]}")
            if after["calls"] - before["calls"] != calls:
                raise SystemExit(f"turn {i}: the app's clock counted {after['calls'] - before['calls']} tool calls")
            inside = (after["model"] - before["model"]) + (after["tool"] - before["tool"])
            if i >= warmup:
                samples.append((wall - inside) / calls)
                if raw is not None:
                    raw.append(wall / calls)
    return samples


Post = Callable[[bytes, dict[str, str]], Awaitable[tuple[int, bytes]]]


@contextlib.asynccontextmanager
async def _lean_post(url: str) -> AsyncIterator[tuple[Post, Post]]:
    """POST /agui (and the app's clock) with bench/serve.py's lean client; the whole response is
    read before it returns."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from serve import LoopbackHttp

    host, port = url.removeprefix("http://").rsplit(":", 1)
    http = LoopbackHttp(host, int(port))
    try:
        yield (lambda body, headers: http.post("/agui", body, headers),
               lambda body, headers: http.post(scenario.CLOCK_PATH, body, headers))
    finally:
        await http.aclose()


@contextlib.asynccontextmanager
async def _httpx_post(url: str) -> AsyncIterator[tuple[Post, Post]]:
    """POST /agui (and the app's clock) with httpx, the stream read to its end."""
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        def poster(path: str) -> Post:
            async def send(body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
                async with http.stream("POST", path, content=body, headers=headers) as resp:
                    return resp.status_code, await resp.aread()
            return send

        yield poster("/agui"), poster(scenario.CLOCK_PATH)


def main() -> int:
    """Start the app, play the turns, print the result line, stop the app."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", required=True, help="the app's command line (JSON list); --port N is added")
    parser.add_argument("--sign", action="store_true", help="sign requests as skillc serve requires")
    parser.add_argument("--calls", type=int, default=scenario.CALLS)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--client", choices=("lean", "httpx"), default="lean",
                        help="the HTTP client: bench/serve.py's lean one (default) or httpx")
    args = parser.parse_args()
    port = free_port()
    command = [*json.loads(args.app), "--calls", str(args.calls), "--port", str(port)]
    proc = subprocess.Popen(command)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, proc)
        raw: list[float] = []
        samples = asyncio.run(play(url, args.sign, args.calls, args.turns, args.warmup, args.client, raw))
        scenario.report(samples, raw=statistics.median(raw))
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
