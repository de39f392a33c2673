"""`skillc serve` under load: turns per second and added latency per tool call vs the in-process API.

Not a test; prints one table measured in one run. Both sides run the same turn on the same
runtime: the compiled example studio, the demo CMS as an in-process MCP server (its SQLite file in
a temp folder), a SQLite store on disk, and a model double that answers at once (route → editor;
step → `cms_space_list`, then a follow-up question that ends the turn). Every turn opens a new
session: 1 business call + 1 builtin call per turn.

- in-process: `Runtime.open_session` + `Session.send`, N sessions at a time in one event loop.
- served: a `skillc serve` app in a child process (uvicorn on 127.0.0.1), driven over loopback by N
  concurrent clients that sign every request (HMAC) and read the AG-UI stream to RUN_FINISHED.
  The client is a lean HTTP/1.1 one on asyncio streams (`LoopbackHttp`), so the figure is the
  server's: httpx costs about 1.2 ms more CPU per turn than it, as much as the server adds
  (`--client httpx` measures with it). The client's CPU per served turn is printed too.

Added latency per tool call = (served turn latency − in-process turn latency) / tool calls per
turn, from the sequential rows (N=1, so queueing does not count as overhead), where the two sides
take turns one by one in one event loop: in-process turn i, then served turn i (which goes first
swaps every round), so a pair of turns sees the same machine at nearly the same moment. A round's
p50 is the median of its pairs' differences (a paired measurement: a loaded machine moves both
turns of a pair alike), its p99 the difference of the two sides' p99s. Each side's first WARMUP
turns are not counted (a cold first turn once made the in-process p99 larger than the served
one). The concurrent rows (N>1) run the sides one after the other, alternating over `--rounds`
rounds. Rows give the median of the rounds and its spread (min-max).

    python bench/serve.py [--sessions 8] [--turns 80] [--rounds 3] [--time-limit 60] [--client lean|httpx]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SECRET = "bench-secret"
PLATFORM = {"userId": 7, "organId": 9, "name": "bench"}
CALLS_PER_TURN = 2
WARMUP = 3  # uncounted turns per side and round: the first turn of a runtime is cold


def responder() -> Any:
    """An order-independent model: each session's next step follows from its own messages."""
    from skillc.runtime.model import ModelResponse, ToolCall

    counter = iter(range(10**9))

    def answer(request: Any) -> Any:
        if request.purpose == "route":
            return ModelResponse(choice={"agent": "editor"})
        last = request.messages[-1]
        n = next(counter)
        if last.get("role") == "tool":
            args = json.dumps({"question": f"Which title? ({n})", "expectedFields": ["title"]})
            return ModelResponse(tool_calls=[ToolCall(f"c{n}", "builtin_node_follow_up", args)])
        return ModelResponse(tool_calls=[ToolCall(f"c{n}", "cms_space_list", "{}")])

    return answer


def parts(tmp: Path) -> tuple[Any, Any, Any]:
    """(studio, gateway servers, model) shared by both sides' construction."""
    from skillc.examples.cms_server import build_server
    from skillc.runtime.mcp.gateway import InProcessServer
    from skillc.runtime.model import ModelDouble

    return ({"cms": InProcessServer(build_server(str(tmp / "cms.sqlite")))}, ModelDouble(responder()), None)


def compile_studio(out: Path) -> None:
    """The example studio, compiled (the bench may use the compiler; the runtime does not)."""
    from skillc.compiler.build import compile_studio as build

    build(ROOT / "examples" / "studio", out)


def config_for(tmp: Path, compiled: Path, name: str) -> Any:
    """A Config with the compiled studio and a store of its own."""
    from skillc.runtime.outside.config import parse_config

    return parse_config(f'[studio]\nsource = {str(compiled)!r}\n[store]\npath = {str(tmp / name)!r}\n',
                        tmp / "skillc.toml")


def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of `values`."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# ---------------------------------------------------------------- in-process side

@contextlib.asynccontextmanager
async def in_process_side(tmp: Path, compiled: Path, tag: str) -> AsyncIterator[Callable[[Any], Awaitable[float]]]:
    """A runtime in this process and its turn: `turn(i)` opens session `in{tag}-{i}`, sends the
    message and returns the seconds it took (after WARMUP uncounted turns)."""
    from skillc.runtime import Runtime, TraceWriter, load_compiled
    from skillc.runtime.mcp.gateway import McpGateway
    from skillc.runtime.store import Store

    servers, model, _ = parts(tmp)
    config = config_for(tmp, compiled, f"inproc-{tag}.sqlite")
    store = Store(config.store.path)
    async with McpGateway(servers) as gateway:
        runtime = Runtime(load_compiled(compiled), gateway, model, store, config.settings,
                          trace=TraceWriter(keep=False))

        async def turn(i: Any) -> float:
            t0 = time.perf_counter()
            session = await runtime.open_session(dict(PLATFORM), session_id=f"in{tag}-{i}")
            reply = await session.send("Create an article")
            took = time.perf_counter() - t0
            assert reply.suspended, reply.text
            return took

        for w in range(WARMUP):  # the first turns load modules and warm caches: not counted
            await turn(f"warm{w}")
        yield turn
    store.close()


async def in_process(tmp: Path, compiled: Path, concurrency: int, turns: int,
                     deadline: float, tag: str) -> tuple[list[float], float, float]:
    """Per-turn latencies of `turns` new-session turns, `concurrency` at a time (after WARMUP
    uncounted turns), the wall time and this process's CPU seconds of the counted turns."""
    latencies: list[float] = []
    async with in_process_side(tmp, compiled, tag) as turn:
        queue = iter(range(turns))

        async def worker() -> None:
            for i in queue:
                if time.monotonic() > deadline:
                    return
                latencies.append(await turn(i))

        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return latencies, wall, cpu


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far, every thread's: from /proc/<pid>/task/*/schedstat (ns), else
    /proc/<pid>/stat (clock ticks, 10 ms apart: too coarse to time one turn); 0 without /proc."""
    try:
        return sum(int((task / "schedstat").read_text().split()[0]) for task in Path(f"/proc/{pid}/task").iterdir()) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- served side

def child(port: int, tmp: str, compiled: str) -> None:
    """The served side: `create_app` with the same parts, under uvicorn on 127.0.0.1:port."""
    import uvicorn

    from skillc.runtime.server import create_app
    from skillc.runtime.server.options import ServeOptions

    tmp_path = Path(tmp)
    servers, model, _ = parts(tmp_path)

    app = create_app(config=config_for(tmp_path, Path(compiled), "served.sqlite"),
                     options=ServeOptions(secret=SECRET, studio_refresh=3600.0, trace_dir=str(tmp_path / "traces")),
                     model=model, servers=servers)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


class LoopbackHttp:
    """A lean HTTP/1.1 client of the loopback server: one keep-alive connection on asyncio
    streams, a request written in one write, the response read as it comes (chunked or with a
    length). It does the least a client must, so the served figure counts the server's work and
    not a client library's (httpx spends about 1.2 ms of CPU per turn here, as much as the
    server adds; `--client httpx` measures with it)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """POST `body`, read the whole response: (status, body, de-chunked). A kept connection
        the server closed meanwhile (uvicorn's keep-alive timeout: no byte of an answer came) is
        opened again and the request sent once more: that server never read it."""
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        request = (f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{head}"
                   f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1") + body
        for attempt in (1, 2):
            fresh = self._conn is None
            if self._conn is None:
                self._conn = await asyncio.open_connection(self.host, self.port)
            reader, writer = self._conn
            try:
                writer.write(request)
                raw_head = await reader.readuntil(b"\r\n\r\n")
                break
            except (asyncio.IncompleteReadError, ConnectionError) as exc:
                await self.aclose()
                if fresh or attempt == 2 or (isinstance(exc, asyncio.IncompleteReadError) and exc.partial):
                    raise
        status_line, *lines = raw_head.decode("latin-1").split("\r\n")
        fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}
        if fields.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while size := int((await reader.readuntil(b"\r\n"))[:-2].split(b";")[0], 16):
                chunks.append((await reader.readexactly(size + 2))[:-2])
            await reader.readuntil(b"\r\n")  # the empty trailer
            data = b"".join(chunks)
        else:
            data = await reader.readexactly(int(fields.get("content-length", "0")))
        if fields.get("connection", "").lower() == "close":
            await self.aclose()
        return int(status_line.split()[1]), data

    async def aclose(self) -> None:
        """Close the connection (the next request opens another)."""
        if self._conn is not None:
            self._conn[1].close()
            with contextlib.suppress(OSError):
                await self._conn[1].wait_closed()
            self._conn = None


def run_body(tag: str, i: Any) -> bytes:
    """The signed POST /agui body of turn `i`: a new thread and run."""
    return json.dumps({"threadId": f"sv{tag}-{i}", "runId": f"run{tag}-{i}",
                       "messages": [{"id": "m1", "role": "user", "content": "Create an article"}]}).encode()


def last_event(stream: bytes) -> str:
    """The last `data:` line of an SSE body (with what follows it)."""
    return stream[stream.rfind(b"\ndata: ", 0, len(stream) - 2) + 1:].decode()


def check_finished(last: str) -> None:
    """The stream's last event is RUN_FINISHED with the follow-up question's interrupt."""
    assert '"RUN_FINISHED"' in last and '"interrupt"' in last, last[:200]


@contextlib.asynccontextmanager
async def served_side(url: str, concurrency: int, tag: str,
                      client: str = "lean") -> AsyncIterator[Callable[[Any], Awaitable[float]]]:
    """An HTTP client of the served child and its turn: `turn(i)` posts a signed run of a new
    thread `sv{tag}-{i}`, reads the AG-UI stream to its end and returns the seconds it took.
    `client`: "lean" (LoopbackHttp, one connection per concurrent turn) or "httpx"."""
    from skillc.runtime.server.auth import sign_request

    def signed(i: Any) -> tuple[bytes, dict[str, str]]:
        body = run_body(tag, i)
        return body, {**sign_request(SECRET, "POST", "/agui", body, PLATFORM), "Content-Type": "application/json"}

    if client == "lean":
        host, _, port = url.removeprefix("http://").partition(":")
        idle = [LoopbackHttp(host, int(port)) for _ in range(concurrency)]

        async def lean_turn(i: Any) -> float:
            body, headers = signed(i)
            conn = idle.pop()
            try:
                t0 = time.perf_counter()
                status, data = await conn.post("/agui", body, headers)
                last = last_event(data)
                took = time.perf_counter() - t0
            finally:
                idle.append(conn)
            assert status == 200, data[:300]
            check_finished(last)
            return took

        try:
            for w in range(WARMUP):
                await lean_turn(f"warm{w}")
            yield lean_turn
        finally:
            for conn in idle:
                await conn.aclose()
        return

    import httpx

    limits = httpx.Limits(max_connections=concurrency + 2)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:

        async def turn(i: Any) -> float:
            body, headers = signed(i)
            t0 = time.perf_counter()
            last = ""
            async with http.stream("POST", "/agui", content=body, headers=headers) as resp:
                assert resp.status_code == 200, await resp.aread()
                async for line in resp.aiter_lines():
                    if line.startswith("data: "):
                        last = line
            took = time.perf_counter() - t0
            check_finished(last)
            return took

        for w in range(WARMUP):
            await turn(f"warm{w}")
        yield turn


async def served(url: str, concurrency: int, turns: int, deadline: float, tag: str,
                 pid: int, client: str) -> tuple[list[float], float]:
    """Per-turn latencies over loopback (signed POST /agui, the stream read to its end) and the
    server process's CPU seconds over the counted turns."""
    latencies: list[float] = []
    queue = iter(range(turns))
    async with served_side(url, concurrency, tag, client) as turn:

        async def worker() -> None:
            for i in queue:
                if time.monotonic() > deadline:
                    return
                latencies.append(await turn(i))

        cpu = cpu_seconds(pid)
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        cpu = cpu_seconds(pid) - cpu
    return latencies, cpu


Side = tuple[list[float], float, float]  # (latencies, wall seconds, CPU seconds) of one side in one round


async def paired(tmp: Path, compiled: Path, url: str, turns: int, deadline: float, tag: str, pid: int,
                 served_first: bool, client: str) -> tuple[Side, Side, float]:
    """The sequential row: the two sides take turns one by one in this event loop (in-process turn
    i and served turn i back to back, `served_first` says which goes first). Each side's CPU is
    counted over its own turns only: this process's for the in-process turns, the server's for
    the served ones; the client's (this process's during the served turns) is the third value."""
    inproc: list[float] = []
    over: list[float] = []
    cpu_in = cpu_over = cpu_client = 0.0
    async with in_process_side(tmp, compiled, tag) as in_turn, served_side(url, 1, tag, client) as served_turn:
        for i in range(turns):
            if time.monotonic() > deadline:
                break
            for side in (("served", "in") if served_first else ("in", "served")):
                if side == "in":
                    c0 = time.process_time()
                    inproc.append(await in_turn(i))
                    cpu_in += time.process_time() - c0
                else:
                    c0, own = cpu_seconds(pid), time.process_time()
                    over.append(await served_turn(i))
                    cpu_over += cpu_seconds(pid) - c0
                    cpu_client += time.process_time() - own
    return (inproc, sum(inproc), cpu_in), (over, sum(over), cpu_over), cpu_client


def http_parser() -> str:
    """The HTTP implementation uvicorn picks in the child (`http="auto"`: httptools when it is
    installed, else h11): the figure depends on it (httptools took 0.4 ms of server CPU off a turn)."""
    import importlib.util

    return "httptools" if importlib.util.find_spec("httptools") is not None else "h11"


def free_port() -> int:
    """A free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[bytes], limit: float = 60.0) -> None:
    """Until /readyz answers 200 (the child compiles nothing; it loads and opens MCP)."""
    import httpx

    end = time.monotonic() + limit
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"the served child exited with {proc.returncode}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit("the served child did not come up")


def main() -> int:
    """Run both sides, print the table."""
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=8, help="concurrent sessions (default 8)")
    ap.add_argument("--turns", type=int, default=80, help="turns per measurement (default 80)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of both sides (default 3)")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per measurement at most")
    ap.add_argument("--client", choices=("lean", "httpx"), default="lean",
                    help="the served side's HTTP client: lean (asyncio streams, the default) or httpx")
    ap.add_argument("--child", nargs=3, metavar=("PORT", "TMP", "COMPILED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(int(args.child[0]), args.child[1], args.child[2])
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="skillc-bench-serve-"))
    compiled = tmp / "compiled"
    compile_studio(compiled)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, __file__, "--child", str(port), str(tmp), str(compiled)],
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    rounds = max(1, args.rounds)
    # results[n][side] = one (latencies, wall, CPU seconds) per round
    results: dict[int, dict[str, list[Side]]] = {}
    client_cpu: list[float] = []  # the client's CPU seconds per served turn of the sequential row, per round
    try:
        wait_ready(url, proc)
        for r in range(rounds):
            for n in dict.fromkeys((1, args.sessions)):
                sides = results.setdefault(n, {"in-process": [], "served": []})
                tag = f"{n}-{r}"
                t0 = time.monotonic()
                if n == 1:  # turn by turn, paired
                    inside, outside, own = asyncio.run(paired(tmp, compiled, url, args.turns, t0 + args.time_limit,
                                                              tag, proc.pid, r % 2 == 1, args.client))
                    client_cpu.append(own / max(len(outside[0]), 1))
                    sides["in-process"].append(inside)
                    sides["served"].append(outside)
                    continue
                order = ("in-process", "served") if r % 2 == 0 else ("served", "in-process")
                for side in order:
                    t0 = time.monotonic()
                    if side == "in-process":
                        sides[side].append(asyncio.run(in_process(tmp, compiled, n, args.turns, t0 + args.time_limit, tag)))
                    else:
                        lat, cpu = asyncio.run(served(url, n, args.turns, t0 + args.time_limit, tag, proc.pid,
                                                      args.client))
                        sides[side].append((lat, time.monotonic() - t0, cpu))
    finally:
        proc.terminate()
        proc.wait(30)
    print(f"skillc serve vs in-process API: {args.turns} turns per row and round (new session each; "
          f"{CALLS_PER_TURN} tool calls per turn, {WARMUP} warm-up turns uncounted), example studio, "
          f"in-process demo CMS, instant model, {args.client} HTTP client, uvicorn's {http_parser()} parser; "
          f"median (min-max) of {rounds} alternating rounds\n")
    print(f"{'sessions':>8} | {'side':<10} | {'turns/s':>22} | {'p50 ms':>22} | {'p99 ms':>22}")
    print("-" * 98)

    def cell(values: list[float]) -> str:
        return f"{statistics.median(values):8.2f} ({min(values):.2f}-{max(values):.2f})"

    for n, sides in results.items():
        for side, runs in sides.items():
            rate = [len(lat) / wall for lat, wall, _ in runs]
            p50 = [pct(lat, .5) * 1000 for lat, _, _ in runs]
            p99 = [pct(lat, .99) * 1000 for lat, _, _ in runs]
            print(f"{n:>8} | {side:<10} | {cell(rate):>22} | {cell(p50):>22} | {cell(p99):>22}")
    seq = results[1]
    pairs = list(zip(seq["in-process"], seq["served"]))
    # p50: the median of the pairs' differences (turn i served − turn i in process)
    add50 = [statistics.median(b - a for a, b in zip(i, o)) / CALLS_PER_TURN * 1000 for (i, _, _), (o, _, _) in pairs]
    add99 = [(pct(o, .99) - pct(i, .99)) / CALLS_PER_TURN * 1000 for (i, _, _), (o, _, _) in pairs]
    # CPU beside wall clock: on a loaded machine the latencies count other processes' time too;
    # the server's own CPU per turn against the in-process turn's is what the service adds
    add_cpu = [(oc / max(len(o), 1) - ic / max(len(i), 1)) / CALLS_PER_TURN * 1000 for (i, _, ic), (o, _, oc) in pairs]
    print(f"\nadded latency per tool call (sequential, paired turns: served − in-process, / {CALLS_PER_TURN}, per round): "
          f"p50 {cell(add50).strip()} ms, p99 {cell(add99).strip()} ms (target p50 <= 1 ms)")
    print(f"added CPU per tool call (sequential, the server process's CPU per turn − the in-process turn's, "
          f"/ {CALLS_PER_TURN}, per round): {cell(add_cpu).strip()} ms")
    # the client's own work is in the added latency (it runs between the server's writes and the
    # turn's end): a client library's cost would be counted as the server's
    print(f"client CPU per served turn ({args.client} client, this process's CPU during the served turns of "
          f"the sequential row, per round): {cell([c * 1000 for c in client_cpu]).strip()} ms")
    inproc = [x for lat, _, _ in seq["in-process"] for x in lat]
    over = [x for lat, _, _ in seq["served"] for x in lat]
    print(f"mean turn: in-process {statistics.mean(inproc) * 1000:.2f} ms, served {statistics.mean(over) * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
