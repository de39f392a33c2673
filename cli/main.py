"""The `skillc` command line: one sub-command per module under `skillc.commands`.

Command modules keep their top-level imports light (argparse, stdlib): heavy imports (lark, the
mcp SDK, the compiler) happen inside `run`, so `skillc --help` and run-time commands start fast
and work where the compiler extra is not installed.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# Order is the order of `skillc --help`.
COMMANDS: tuple[str, ...] = ("check", "compile", "schema", "graph", "explain", "scenario", "demo", "chat")

EPILOG = """\
typical use:
  skillc check examples/studio            validate a studio, print diagnostics like a compiler
  skillc compile examples/studio -o generated
  skillc demo                             compile the example studio and play a conversation
  skillc scenario run tests/scenarios/*.yaml --trace trace.jsonl
"""


def build_parser() -> argparse.ArgumentParser:
    """The full parser, with every available command registered."""
    parser = argparse.ArgumentParser(
        prog="skillc",
        description="Compile skill contracts and run agents whose tool calls obey them.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from skillc import __version__

    parser.add_argument("--version", action="version", version=f"skillc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"skillc.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"skillc.commands.{name}":
                continue  # a command not built yet
            raise
        cmd = sub.add_parser(
            name,
            help=module.HELP,
            description=getattr(module, "DESCRIPTION", module.HELP),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.configure(cmd)
        cmd.set_defaults(_run=module.run)
    return parser


def run(argv: list[str] | None = None) -> int:
    """Parse `argv` and run the chosen command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
