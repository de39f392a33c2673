"""The peers mode: skillc beside LangGraph, the OpenAI Agents SDK and Pydantic AI on the same turn.

    python bench/compare.py --peers [--rounds 3] [--calls 5] [--turns 20]

Makes each peer's venv once (venvs.py), then plays `--rounds` rounds; a round runs every
(framework, mode) once, each in a subprocess of its own driver under its own interpreter, the
order rotated from round to round so load falls on all alike. Modes: direct (tools as plain
functions; skillc's in-process MCP server), mcp (every client against tool_server.py over stdio)
and served (skillc serve vs Pydantic AI's AG-UI adapter, one loopback client: served.py). Prints
the table of table.py. Not a test; it asserts nothing about times.
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


@dataclass(frozen=True)
class Job:
    """One measurement: a framework in a mode, as a command line."""

    framework: str
    mode: str
    argv: tuple[str, ...]


def interpreter(venv: str | None) -> str:
    """The python that runs a driver: the peer's venv, or this one for skillc."""
    return sys.executable if venv is None else str(venvs.python_of(venv))


def jobs(frameworks: list[str], calls: int, turns: int, warmup: int) -> list[Job]:
    """Every (framework, mode) to measure, in table order."""
    server = json.dumps([sys.executable, str(HERE / "tool_server.py")])
    counts = ["--calls", str(calls), "--turns", str(turns), "--warmup", str(warmup)]
    out: list[Job] = []
    for mode in MODES:
        for name in frameworks:
            venv, driver, served = DRIVERS[name]
            python = interpreter(venv)
            if mode == "served":
                if not served:
                    continue
                app = json.dumps([python, str(HERE / driver), "--mode", "serve"])
                sign = ["--sign"] if name == table.SKILLC else []
                argv = (sys.executable, str(HERE / "served.py"), "--app", app, *sign, *counts)
            else:
                argv = (python, str(HERE / driver), "--mode", mode, "--server", server, *counts)
            out.append(Job(name, mode, argv))
    return out


def run_one(job: Job, timeout: float) -> float | None:
    """The job's value (its median seconds per tool call), from its result line; None (the reason
    on stderr) when it failed, so one broken round does not lose the others' measurements."""
    # A group of its own: on a timeout the driver's children (an MCP server, a served app) go too.
    proc = subprocess.Popen(job.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=HERE.parent.parent, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        print(f"{job.framework} {job.mode}: no result within {timeout:g} s", file=sys.stderr)
        return None
    if proc.returncode != 0:
        print(f"{job.framework} {job.mode} failed ({proc.returncode}):\n{stderr[-3000:]}", file=sys.stderr)
        return None
    return float(scenario.parse_report(stdout)["median"])


def main(argv: list[str] | None = None) -> int:
    """Make the venvs, play the rounds, print the table."""
    parser = argparse.ArgumentParser(prog="compare.py --peers", description=__doc__.splitlines()[0])
    parser.add_argument("--peers", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=3, help="round-robin rounds (default 3)")
    parser.add_argument("--calls", type=int, default=scenario.CALLS, help="tool calls per turn (default 5)")
    parser.add_argument("--turns", type=int, default=20, help="measured turns per subprocess (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="uncounted turns per subprocess (default 3)")
    parser.add_argument("--only", nargs="+", choices=list(DRIVERS), help="measure only these frameworks")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per subprocess at most")
    args = parser.parse_args(argv)
    frameworks = args.only or list(DRIVERS)
    if table.SKILLC not in frameworks:
        frameworks.insert(0, table.SKILLC)
    venvs.ensure([v for name in frameworks if (v := DRIVERS[name][0]) is not None])
    todo = jobs(frameworks, args.calls, args.turns, args.warmup)
    values: dict[Job, list[float]] = {job: [] for job in todo}
    for r in range(args.rounds):
        shift = r % len(todo)
        for job in todo[shift:] + todo[:shift]:
            print(f"round {r + 1}/{args.rounds}: {job.framework} {job.mode} …", file=sys.stderr)
            value = run_one(job, args.timeout)
            if value is not None:
                values[job].append(value)
    rows = [table.Row(job.framework, job.mode, tuple(v)) for job, v in values.items()]
    print(table.render(rows, args.rounds, args.calls))
    return 0 if all(len(v) == args.rounds for v in values.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
