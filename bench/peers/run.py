"""The peers mode: skillc beside LangGraph, the OpenAI Agents SDK and Pydantic AI on the same turn.

    python bench/compare.py --peers [--rounds 3] [--calls 5] [--turns 20] [--setups shipped persisted]

Makes each peer's venv once (venvs.py), then plays `--rounds` rounds; a round runs every
(framework, setup, mode) once, each in a subprocess of its own driver under its own interpreter,
the order rotated from round to round so load falls on all alike. Setups (`--persist` of the
drivers): skillc with its store on a SQLite file, and on `:memory:`; each peer as shipped
(keeping nothing) and with its own persistence on a SQLite file (`--setups` picks). Modes: direct (tools as plain
functions; skillc's in-process MCP server), mcp (every client against tool_server.py over stdio)
and served (skillc serve vs Pydantic AI's AG-UI adapter, one loopback client: served.py). Prints
the two tables of table.py (as shipped, with persistence). Not a test; it asserts nothing about times.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scenario  # noqa: E402
import table  # noqa: E402
import venvs  # noqa: E402

# framework -> (its venv, None for the bench's own interpreter; its driver; whether it is served)
DRIVERS: dict[str, tuple[str | None, str, bool]] = {
    table.SKILLC: (None, "skillc_driver.py", True),
    "langgraph": ("langgraph", "langgraph_driver.py", False),
    "openai-agents": ("openai-agents", "openai_agents_driver.py", False),
    "pydantic-ai": ("pydantic-ai", "pydantic_ai_driver.py", True),
}
MODES = ("direct", "mcp", "served")
SETUPS = ("shipped", "persisted")
# (skillc's, a peer's) `--persist` values measured for each setup asked for
PERSISTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "shipped": ((scenario.SQLITE, scenario.MEMORY), (scenario.NONE,)),
    "persisted": ((scenario.SQLITE,), (scenario.SQLITE,)),
}


def persists(framework: str, setups: list[str]) -> list[str]:
    """The `--persist` values to measure `framework` with, for the setups asked for, in order."""
    side = 0 if framework == table.SKILLC else 1
    return list(dict.fromkeys(p for setup in setups for p in PERSISTS[setup][side]))


@dataclass(frozen=True)
class Job:
    """One measurement: a framework in a mode, as a command line."""

    framework: str
    mode: str
    argv: tuple[str, ...]
    persist: str = scenario.NONE


def interpreter(venv: str | None) -> str:
    """The python that runs a driver: the peer's venv, or this one for skillc."""
    return sys.executable if venv is None else str(venvs.python_of(venv))


def jobs(frameworks: list[str], calls: int, turns: int, warmup: int,
         setups: list[str] | None = None) -> list[Job]:
    """Every (framework, setup, mode) to measure, in table order (every setup by default)."""
    server = json.dumps([sys.executable, str(HERE / "tool_server.py")])
    counts = ["--calls", str(calls), "--turns", str(turns), "--warmup", str(warmup)]
    out: list[Job] = []
    for mode in MODES:
        for name in frameworks:
            venv, driver, served = DRIVERS[name]
            python = interpreter(venv)
            if mode == "served" and not served:
                continue
            for persist in persists(name, list(setups or SETUPS)):
                if mode == "served":
                    app = json.dumps([python, str(HERE / driver), "--mode", "serve", "--persist", persist])
                    sign = ["--sign"] if name == table.SKILLC else []
                    argv = (sys.executable, str(HERE / "served.py"), "--app", app, *sign, *counts)
                else:
                    argv = (python, str(HERE / driver), "--mode", mode, "--persist", persist, "--server", server,
                            *counts)
                out.append(Job(name, mode, argv, persist))
    return out


def run_one(job: Job, timeout: float) -> dict[str, float] | None:
    """The job's values (`median` seconds per tool call, and a served job's `raw`), from its
    result line; None (the reason on stderr) when it failed, so one broken round does not lose
    the others' measurements."""
    # A group of its own: on a timeout the driver's children (an MCP server, a served app) go too.
    proc = subprocess.Popen(job.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=HERE.parent.parent, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        print(f"{job.framework} {job.persist} {job.mode}: no result within {timeout:g} s", file=sys.stderr)
        return None
    if proc.returncode != 0:
        print(f"{job.framework} {job.persist} {job.mode} failed ({proc.returncode}):\n{stderr[-3000:]}",
              file=sys.stderr)
        return None
    found = scenario.parse_report(stdout)
    return {k: float(found[k]) for k in ("median", table.RAW) if k in found}


def main(argv: list[str] | None = None) -> int:
    """Make the venvs, play the rounds, print the table."""
    parser = argparse.ArgumentParser(prog="compare.py --peers", description=__doc__.splitlines()[0])
    parser.add_argument("--peers", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=3, help="round-robin rounds (default 3)")
    parser.add_argument("--calls", type=int, default=scenario.CALLS, help="tool calls per turn (default 5)")
    parser.add_argument("--turns", type=int, default=20, help="measured turns per subprocess (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="uncounted turns per subprocess (default 3)")
    parser.add_argument("--only", nargs="+", choices=list(DRIVERS), help="measure only these frameworks")
    parser.add_argument("--setups", nargs="+", choices=SETUPS, default=list(SETUPS),
                        help="shipped (the peers keeping nothing), persisted (each with its own SQLite persistence)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per subprocess at most")
    args = parser.parse_args(argv)
    frameworks = args.only or list(DRIVERS)
    if table.SKILLC not in frameworks:
        frameworks.insert(0, table.SKILLC)
    venvs.ensure([v for name in frameworks if (v := DRIVERS[name][0]) is not None])
    todo = jobs(frameworks, args.calls, args.turns, args.warmup, args.setups)
    values: dict[Job, list[float]] = {job: [] for job in todo}
    raws: dict[Job, list[float]] = {job: [] for job in todo if job.mode == "served"}
    for r in range(args.rounds):
        shift = r % len(todo)
        for job in todo[shift:] + todo[:shift]:
            print(f"round {r + 1}/{args.rounds}: {job.framework} {job.persist} {job.mode} …", file=sys.stderr)
            value = run_one(job, args.timeout)
            if value is not None:
                values[job].append(value["median"])
                if job in raws and table.RAW in value:
                    raws[job].append(value[table.RAW])
    rows = [table.Row(job.framework, job.mode, tuple(v), job.persist) for job, v in values.items()]
    rows += [table.Row(job.framework, table.RAW, tuple(v), job.persist) for job, v in raws.items()]
    print(table.render(rows, args.rounds, args.calls))
    return 0 if all(len(v) == args.rounds for v in values.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
