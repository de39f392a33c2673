"""Turns per second of `skillc serve` workers (one on SQLite, one and two on PostgreSQL), and what a
session stuck on a row lock costs the others.

Not a test: prints one table measured in one run. Each row starts its workers (real `skillc serve`
processes, tests/helpers/serve_workers.py) on a fresh store, then C client threads each drive
their own sessions over AG-UI for a fixed number of turns. A turn is one task of the ledger studio
(tests/helpers/integration/studios/ledger): the model calls the write `ledger_post` (approval
bypassed), the ledger MCP server (stdio, one per worker) books it, the model finishes the node.
The model is a stateless loopback responder (below), so concurrent sessions never share a script.

With two workers, sessions are either sticky (each on one worker, as with a load balancer's
affinity) or alternating (each turn on the other worker, a balancer without affinity: every turn
finds the session last written by the other worker, which reopens it from the store). PostgreSQL is the throw-away test
cluster of tests/pg_cluster.py (synchronous commits, fsync off: its numbers are the store's CPU and round trips, not a
disk's flush latency; SQLite runs with its default synchronous=NORMAL on the local disk).

The blocking table: one PostgreSQL worker; `/healthz` is asked 50 times and an unrelated
session runs 10 turns, first with nothing blocked, then while another session's run waits on its
lease row, held by a transaction of the bench (a stuck writer). Unaffected means the blocked
column stays within about 2x of the unblocked one.

    python bench/scale.py [--clients 8] [--turns 5] [--repeat 3]     # a few minutes

Every row's workers run for the whole bench and the rows are measured in interleaved rounds
(--repeat of them), so a load that comes and goes falls on every row alike. Prints per row:
turns/s (the median of the rounds, and their spread min-max), p50 and p99 latency of a turn as
the client sees it (of the median round), failed turns (all rounds), the workers' CPU time per
turn and how busy the machine's cores were meanwhile (every process: the bench's clients, model
and MCP servers, PostgreSQL, other users): a row near 100 % is bounded by the machine, not by the
workers; then the ratios the targets are about, and the p99 (and median) of /healthz and of the
unrelated turn, unblocked and blocked, side by side. No number is asserted: a loaded machine
changes them all.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "helpers")]

import serve_workers as sw  # noqa: E402  (needs the path above)


class Responder(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that answers from the request alone: the write for the
    amount and reference of the last user message, then a finish once the write's result is in."""

    protocol_version = "HTTP/1.1"
    # The headers and the body are two writes: with Nagle's algorithm the body waited for the
    # client's delayed ACK of the headers, 40 ms a completion, 89 of a lone turn's 104 ms
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        """Quiet."""

    def do_POST(self) -> None:
        """One completion."""
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        messages = body.get("messages", [])
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        text = str(messages[last_user].get("content", "")) if last_user >= 0 else ""
        posted = any(m.get("role") == "tool" for m in messages[last_user + 1:])
        match = re.search(r"Book (\d+) under reference (\S+)", text)
        if posted or not match:
            name, args = "builtin_node_finish", {"output": "booked"}
        else:
            name, args = "ledger_post", {"ref": match.group(2), "amount": int(match.group(1))}
        call = {"id": f"c{time.monotonic_ns()}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}
        out = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                          "choices": [{"index": 0, "finish_reason": "tool_calls",
                                       "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
                          "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def _serve_model(port: Any) -> None:
    """The model responder's process: the bench's clients and the responder do not share a GIL,
    and what the responder costs is counted apart."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Responder)
    server.daemon_threads = True
    port.send(server.server_address[1])
    server.serve_forever()


def start_model() -> tuple[Any, str]:
    """The responder in a process of its own (forked before any thread of the bench) and its URL."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    mine, theirs = context.Pipe()
    proc = context.Process(target=_serve_model, args=(theirs,), daemon=True)
    proc.start()
    return proc, f"http://127.0.0.1:{mine.recv()}/v1"


def _postmaster(cluster: Any) -> int | None:
    """The test cluster's postmaster pid (None for an external server: its CPU is not counted)."""
    try:
        return int((Path(cluster.socket_dir) / "data" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _ceiling(ms: dict[str, float], cores: int | None = None) -> str:
    """What two workers can reach beside one on this machine, from one worker's CPU per turn:
    a worker runs on one core at most, the machine's c cores bound everything together, so with the
    worker a share w of a turn's CPU, two workers reach at most min(2, max(1, c * w)) times one."""
    cores = cores or os.cpu_count() or 1
    ours = sum(v for k, v in ms.items() if k != "rest")
    share = ms["worker"] / ours if ours else float("nan")
    return (f"1 PostgreSQL worker: the worker is {100 * share:.0f}% of the bench's CPU per turn ({ms['worker']:.1f} of "
            f"{ours:.1f} ms); on {cores} cores 2 workers reach at most min(2, max(1, {cores} x {share:.2f})) = "
            f"{min(2.0, max(1.0, cores * share)):.2f}x one")


def _process_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, user + system CPU seconds) of every process on the machine (Linux /proc)."""
    tick, table = os.sysconf("SC_CLK_TCK"), {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            table[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
        except (OSError, ValueError, IndexError):
            continue  # ended meanwhile
    return table


def _descendants(table: dict[int, tuple[int, float]], roots: set[int]) -> set[int]:
    """Every process below `roots` (not the roots themselves)."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    out, todo = set(), list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


class Accounts:
    """Where a round's CPU went, by kind of process: the workers, their MCP servers, PostgreSQL
    (the postmaster and every backend), the model responder, the bench's clients; the rest of the
    machine's busy time is everything else (other users of the machine, the kernel)."""

    KINDS = ("worker", "MCP", "PostgreSQL", "model", "client", "rest")

    def __init__(self, postmaster: int | None, model: int) -> None:
        self.postmaster, self.model = postmaster, model

    def snapshot(self, workers: list[sw.Worker]) -> dict[str, float]:
        """CPU seconds so far per kind, and the machine's busy and total seconds."""
        table, (busy, total) = _process_table(), _machine_busy()
        cpu = lambda pids: sum(table[p][1] for p in pids if p in table)  # noqa: E731
        roots = {w.proc.pid for w in workers}
        pg = {self.postmaster} | _descendants(table, {self.postmaster}) if self.postmaster else set()
        out = {"worker": cpu(roots), "MCP": cpu(_descendants(table, roots)), "PostgreSQL": cpu(pg),
               "model": cpu({self.model}), "client": cpu({os.getpid()}), "busy": busy, "total": total}
        return out

    @staticmethod
    def spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
        """CPU seconds per kind between two snapshots; `rest` the machine's busy time left over."""
        out = {k: after[k] - before[k] for k in Accounts.KINDS if k != "rest"}
        out["rest"] = (after["busy"] - before["busy"]) - sum(out.values())
        out["busy"] = (after["busy"] - before["busy"]) / max(1e-9, after["total"] - before["total"])
        return out


def _machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far (Linux /proc/stat), every core."""
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    except (OSError, ValueError):
        return 0.0, 0.0
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    tick = os.sysconf("SC_CLK_TCK")
    return (sum(values) - idle) / tick, sum(values) / tick


def drive(workers: list[sw.Worker], clients: int, turns: int, sticky: bool, tag: str,
          accounts: Accounts) -> dict[str, Any]:
    """C client threads, each with one session of `turns` turns; returns timings, failures, the
    CPU seconds of each kind of process and the machine's busy share of its cores meanwhile."""
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    before: dict[str, float] = {}
    # the snapshot is taken once every client made its HTTP client (tens of ms of CPU each, not a turn's)
    barrier = threading.Barrier(clients + 1, action=lambda: before.update(accounts.snapshot(workers)))

    def client(c: int) -> None:
        caller = sw.Caller()
        thread = f"{tag}-s{c}"
        barrier.wait()
        for t in range(turns):
            worker = workers[c % len(workers)] if sticky else workers[(c + t) % len(workers)]
            start = time.perf_counter()
            try:
                run = caller.run(worker, thread, f"{thread}-r{t}", f"Book {100 + t} under reference R-{thread}-{t}")
                ok = run["status"] == 200 and sw.outcome(run).get("type") == "success" and sw.reply_text(run) == "booked"
                why = "" if ok else f"{run['status']} {run['error'] or sw.outcome(run)} {sw.reply_text(run)!r}"
            except Exception as exc:  # a dropped connection counts as a failed turn
                ok, why = False, f"{type(exc).__name__}: {exc}"
            elapsed = time.perf_counter() - start
            with lock:
                (latencies.append(elapsed) if ok else failures.append(why[:200]))
        caller.close()

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for th in threads:
        th.start()
    barrier.wait()
    start = time.perf_counter()
    for th in threads:
        th.join()
    wall = time.perf_counter() - start
    spent = Accounts.spent(before, accounts.snapshot(workers))
    return {"wall": wall, "latencies": sorted(latencies), "failures": failures, "cpu": spent["worker"],
            "busy": spent["busy"], "spent": spent}


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Row:
    """One row of the table: its workers (started once, kept for every round) and its runs."""

    def __init__(self, name: str, stores: list[str], model_url: str, compiled: Path, tmp: Path, accounts: Accounts,
                 sticky: bool = True) -> None:
        self.name, self.stores, self.tmp, self.sticky, self.accounts = name, stores, tmp, sticky, accounts
        self.tag = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")  # session ids allow [A-Za-z0-9._:-]
        configs = [sw.write_config(tmp / self.tag / f"w{i}", model_url=model_url, store=store,
                                   records=tmp / self.tag / f"ledger{i}.sqlite") for i, store in enumerate(stores)]
        self.workers = sw.start_workers(compiled, configs)
        self.runs: list[dict[str, Any]] = []
        drive(self.workers, len(self.workers), 1, sticky, f"{self.tag}-warm", accounts)  # MCP sessions, pools, caches

    def measure(self, args: argparse.Namespace, r: int) -> None:
        """One round of this row."""
        self.runs.append(drive(self.workers, args.clients, args.turns, self.sticky, f"{self.tag}-{r}",
                               self.accounts))

    def stop(self) -> None:
        for w in self.workers:
            w.stop()
        for i in range(len(self.stores)):
            sw.end_ledger_servers(self.tmp / self.tag / f"ledger{i}.sqlite")

    def rate(self) -> float:
        """Median turns/s over the rounds."""
        return statistics.median(len(r["latencies"]) / r["wall"] for r in self.runs)

    def cells(self) -> list[str]:
        runs = self.runs
        rates = sorted(len(r["latencies"]) / r["wall"] for r in runs)
        median = sorted(runs, key=lambda r: len(r["latencies"]) / r["wall"])[len(runs) // 2]
        lat = median["latencies"]
        p = (lambda q: f"{1000 * _quantile(lat, q):.0f}") if lat else (lambda q: "-")
        failures = [f for r in runs for f in r["failures"]]
        if failures:
            print(f"  {self.name}: {len(failures)} failed turns, first: {failures[0]}", file=sys.stderr)
        cpu_per_turn = statistics.median(1000 * r["cpu"] / max(1, len(r["latencies"])) for r in runs)
        busy = statistics.median(r["busy"] for r in runs)
        return [self.name, f"{self.rate():.1f}", f"{rates[0]:.1f}-{rates[-1]:.1f}", p(0.5), p(0.99),
                str(len(failures)), f"{cpu_per_turn:.1f}", f"{100 * busy:.0f}%"]

    def per_turn(self) -> dict[str, float]:
        """CPU ms per turn of each kind of process, the median over the rounds (each kind's own)."""
        return {k: statistics.median(1000 * r["spent"][k] / max(1, len(r["latencies"])) for r in self.runs)
                for k in Accounts.KINDS}

    def cpu_cells(self) -> list[str]:
        """The row's CPU per turn by kind, what the bench's processes spent together, and the
        workers' share of that."""
        ms = self.per_turn()
        ours = sum(v for k, v in ms.items() if k != "rest")
        return [self.name, *(f"{ms[k]:.1f}" for k in Accounts.KINDS), f"{ours:.1f}", f"{100 * ms['worker'] / ours:.0f}%"]


def _probe(worker: sw.Worker, caller: sw.Caller, tag: str) -> tuple[list[float], list[float]]:
    """50 /healthz answers and 10 turns of an unrelated session, each timed (seconds)."""
    import httpx

    health, turns = [], []
    for _ in range(50):
        start = time.perf_counter()
        httpx.get(worker.url + "/healthz", timeout=60)
        health.append(time.perf_counter() - start)
    for t in range(10):
        start = time.perf_counter()
        caller.run(worker, f"{tag}-free", f"{tag}-free-{t}", f"Book {t + 1} under reference R-{tag}-{t}")
        turns.append(time.perf_counter() - start)
    return health, turns


def blocked_rows(url: str, model_url: str, compiled: Path, tmp: Path) -> list[list[str]]:
    """/healthz and an unrelated turn, unblocked and while a session waits on a held row lock."""
    import psycopg

    import pg_cluster

    config = sw.write_config(tmp / "blocked" / "w0", model_url=model_url, store=url,
                             records=tmp / "blocked" / "ledger.sqlite", lock_timeout=120.0)
    (worker,) = sw.start_workers(compiled, [config])
    caller = sw.Caller()
    try:
        _probe(worker, caller, "warm")
        calm = _probe(worker, caller, "calm")
        stuck = psycopg.connect(url)  # holds the blocked session's lease row until the end
        stuck.execute("INSERT INTO leases (session, holder, expires) VALUES ('blocked', 'someone', 0)")
        waiting = threading.Thread(target=lambda: sw.Caller().run(worker, "blocked", "blocked-1", "Book 1 under "
                                                                  "reference R-blocked"), daemon=True)
        waiting.start()
        sw.wait_for(lambda: bool(pg_cluster.query(url, "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                                       "AND datname = current_database()")),
                    "the blocked session to wait on its row")
        busy = _probe(worker, caller, "busy")
        stuck.close()
        waiting.join(60)
    finally:
        caller.close()
        worker.stop()
        sw.end_ledger_servers(tmp / "blocked" / "ledger.sqlite")

    def ms(values: list[float], q: float) -> str:
        return f"{1000 * _quantile(values, q):.1f}"

    return [["1 x PostgreSQL", "p50 / p99 ms, unblocked", "p50 / p99 ms, one session blocked"],
            ["/healthz (50)", f"{ms(calm[0], .5)} / {ms(calm[0], .99)}", f"{ms(busy[0], .5)} / {ms(busy[0], .99)}"],
            ["unrelated turn (10)", f"{ms(calm[1], .5)} / {ms(calm[1], .99)}", f"{ms(busy[1], .5)} / {ms(busy[1], .99)}"]]


def _print(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))))


def main(argv: list[str] | None = None) -> int:
    """Run the three rows and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=8, help="concurrent sessions (default 8)")
    parser.add_argument("--turns", type=int, default=5, help="turns per session (default 5)")
    parser.add_argument("--repeat", type=int, default=3, help="measured runs per row (default 3)")
    args = parser.parse_args(argv)

    import pg_cluster
    from skillc.compiler.build import compile_studio

    tmp = Path(tempfile.mkdtemp(prefix="skillc-scale-"))
    model, model_url = start_model()
    try:
        compile_studio(sw.LEDGER_STUDIO, tmp / "compiled")
        cluster = pg_cluster.shared_cluster()
        accounts = Accounts(_postmaster(cluster), model.pid or 0)
        compiled, made = tmp / "compiled", []
        try:
            made.append(Row("1 x SQLite", [str(tmp / "store.sqlite")], model_url, compiled, tmp, accounts))
            made.append(Row("1 x PostgreSQL", [cluster.new_database("bench1")], model_url, compiled, tmp, accounts))
            shared = cluster.new_database("bench2")
            made.append(Row("2 x PostgreSQL, sticky", [shared, shared], model_url, compiled, tmp, accounts))
            shared = cluster.new_database("bench3")
            made.append(Row("2 x PostgreSQL, alternating", [shared, shared], model_url, compiled, tmp, accounts,
                            sticky=False))
            for r in range(args.repeat):  # interleaved rounds: a load that comes and goes hits every row
                for each in made:
                    each.measure(args, r)
        finally:
            for each in made:
                each.stop()
        rows = [["workers / store", "turns/s", "spread", "p50 ms", "p99 ms", "failed", "worker CPU ms/turn",
                 "machine busy"]] + [each.cells() for each in made]
        cpu = [["CPU ms per turn", *Accounts.KINDS, "bench's own", "worker share"]] + [m.cpu_cells() for m in made]
        sqlite, pg1, pg2 = made[0].rate(), made[1].rate(), made[2].rate()
        ratios = (f"1 PostgreSQL worker / 1 SQLite worker: {pg1 / sqlite:.2f}x (target >= 0.8); "
                  f"2 PostgreSQL workers (sticky) / 1: {pg2 / pg1:.2f}x (target >= 1.6)")
        ceiling = _ceiling(made[1].per_turn())
        blocking = blocked_rows(cluster.new_database("bench4"), model_url, tmp / "compiled", tmp)
    finally:
        model.terminate()
        model.join(10)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"skillc serve, ledger turns (1 write + finish), {args.clients} concurrent sessions x {args.turns} turns, "
          f"median of {args.repeat} runs")
    _print(rows)
    print(ratios)
    print()
    print("where the CPU went (ms per turn, median of the rounds; rest: the machine's other busy time, other users')")
    _print(cpu)
    print(ceiling)
    print()
    print("while one session waits on a row lock (a stuck writer holds its lease row)")
    _print(blocking)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
