"""CPU and wall time of one booking turn in process, on SQLite and on PostgreSQL, side by side.

Not a test: prints one table measured in one run. Both runtimes live in this process, each with its
own store (a SQLite file; a fresh database of the throw-away cluster of tests/pg_cluster.py), the
ledger MCP server in process and a scripted model; a turn is the ledger studio's booking (the write
`ledger_post`, approval bypassed, then the node's finish) in one session per store, after 10
uncounted turns. The rounds are interleaved (each round runs a block of turns on every store, the
order rotated), so a load that comes and goes falls on both alike. Per store: the median over the
rounds of the process's CPU per turn, of the event loop thread's share of it and of the rest
(other threads: the PostgreSQL store's own loop, SQLite's store thread), of the wall time, with the
spread (min-max); then the ratio of the medians. The server's CPU (PostgreSQL's backends) is not
this process's and is not counted.

    python bench/store_turn.py                       # 5 rounds of 60 turns per store
    python bench/store_turn.py --rounds 9 --turns 100
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "runtime")]

BACKENDS = ("sqlite", "postgres")


class Booked:
    """One store's runtime and session, and the figures of its rounds."""

    def __init__(self, backend: str, world: Any) -> None:
        self.backend, self.world = backend, world
        self.cpu: list[float] = []
        self.loop: list[float] = []
        self.wall: list[float] = []
        self.turns = 0

    async def open(self) -> None:
        from helpers.ledger import PLATFORM

        self.runtime, self.model, self.gateway = await self.world.runtime()
        self.session = await self.runtime.open_session(PLATFORM, session_id="s1")

    async def turn(self) -> None:
        ref = f"R-{self.turns:06d}"
        self.turns += 1
        self.model.load_turn([{"call": {"tool": "ledger_post", "args": {"ref": ref, "amount": 10}}},
                              {"call": {"tool": "builtin_node_finish", "args": {"output": f"Booked {ref}"}}}])
        reply = await self.session.send(f"Book 10 under reference {ref}")
        if ref not in reply.text:
            raise SystemExit(f"{self.backend}: the turn did not book {ref}: {reply.text!r}")

    async def block(self, turns: int) -> None:
        cpu, loop, wall = time.process_time(), time.thread_time(), time.perf_counter()
        for _ in range(turns):
            await self.turn()
        self.cpu.append(1000 * (time.process_time() - cpu) / turns)
        self.loop.append(1000 * (time.thread_time() - loop) / turns)
        self.wall.append(1000 * (time.perf_counter() - wall) / turns)

    async def close(self) -> None:
        await self.gateway.aclose()
        await self.runtime.aclose()


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} ({min(values):.2f}-{max(values):.2f})"


async def _measure(rounds: int, turns: int, folder: Path) -> list[Booked]:
    from helpers.ledger import compile_ledger
    from test_durable_session import BYPASS, World

    compiled = compile_ledger(folder / "compiled")
    booked = []
    for backend in BACKENDS:
        here = folder / backend
        here.mkdir()
        booked.append(Booked(backend, World(compiled, here, BYPASS, backend=backend)))
    try:
        for b in booked:
            await b.open()
            for _ in range(10):  # uncounted: imports, prepared statements, caches
                await b.turn()
        for r in range(rounds):
            order = booked[r % len(booked):] + booked[:r % len(booked)]
            for b in order:
                await b.block(turns)
            print(f"round {r + 1}/{rounds}: " + ", ".join(f"{b.backend} {b.cpu[-1]:.2f} ms CPU" for b in booked),
                  file=sys.stderr, flush=True)
    finally:
        for b in booked:
            await b.close()
    return booked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--turns", type=int, default=60, help="turns per store per round (default 60)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="skillc-store-turn-") as folder:
        booked = asyncio.run(_measure(args.rounds, args.turns, Path(folder)))
    print(f"one booking turn in process, ms per turn: median (min-max) of {args.rounds} interleaved rounds "
          f"of {args.turns} turns")
    print(f"{'store':10s} {'CPU':>20s} {'loop thread':>20s} {'other threads':>20s} {'wall':>20s}")
    for b in booked:
        other = [max(0.0, c - t) for c, t in zip(b.cpu, b.loop)]  # thread_time can tick past process_time
        print(f"{b.backend:10s} {_cell(b.cpu):>20s} {_cell(b.loop):>20s} {_cell(other):>20s} {_cell(b.wall):>20s}")
    sqlite, postgres = booked
    print(f"PostgreSQL / SQLite: CPU {statistics.median(postgres.cpu) / statistics.median(sqlite.cpu):.2f}x, "
          f"wall {statistics.median(postgres.wall) / statistics.median(sqlite.wall):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
