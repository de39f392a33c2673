"""The `skillc` command line: one sub-command per module under `skillc.commands`.

Command modules keep their top-level imports light (argparse, stdlib): heavy imports (lark, the
mcp SDK, the compiler) happen inside `run`, so `skillc --help` and run-time commands start fast
and work where the compiler extra is not installed.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import tempfile
import traceback

# Order is the order of `skillc --help`.
COMMANDS: tuple[str, ...] = ("check", "compile", "diff", "schema", "graph", "explain", "rules", "scenario", "replay", "demo", "chat", "serve",
                             "studio", "audit", "model-stub")

EPILOG = """\
typical use (every command; a test keeps this list complete):
  skillc demo                             see it work: the example studio against a real MCP server
  skillc check examples/studio            validate a studio, print diagnostics like a compiler
  skillc explain cms.article.lifecycle    how each argument of a skill is bound and checked
  skillc graph publisher                  an agent's task graph (mermaid; --format dot|json)
  skillc rules eval "args.qty > 0" --vars '{"args": {"qty": 2}}'    try a rule expression
  skillc schema -o skill-contract.schema.json    the contract's JSON Schema, for editors
  skillc compile examples/studio -o generated
  skillc diff main:generated generated    what a change does to each skill's behaviour (review, CI)
  skillc scenario run examples/scenarios/*.yaml
  skillc replay logs.jsonl --studio examples/studio    judge recorded agent traffic, calling no tool
  skillc chat --config skillc.toml        talk to your agents with a real model
  skillc model-stub --port 8090 --script script.json    a fake model for chat/serve without one
  skillc serve generated --config skillc.toml    AG-UI + REST behind a signing gateway (docs/API.md)
  skillc studio serve examples/studio     a studio over HTTP, for several `skillc serve` workers
  skillc audit verify run.trace.jsonl     check a trace's hash chain: was it altered?

`skillc COMMAND --help` explains a command, with examples and its exit statuses. Options before
COMMAND apply to every command: -v / -vv / -q / --log-level set how much of the library's log
shows on stderr (default: warnings).

exit status (every command): 0 success, 1 the work found problems (errors in a studio, a failing
scenario, a stale output directory), 2 bad invocation or unreadable input, 130 interrupted (Ctrl-C),
70 an internal error (a bug: the message names a file with the details).
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
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="show more of the library's log (info; -vv: debug with tracebacks)")
    parser.add_argument("-q", "--quiet", action="count", default=0, help="show only errors from the library's log")
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error", "critical"),
                        help="the library's log level (default: warning, or $SKILLC_LOG_LEVEL)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"skillc.commands.{name.replace('-', '_')}")
        except ModuleNotFoundError as exc:
            if exc.name == f"skillc.commands.{name.replace('-', '_')}":
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
    """Parse `argv` and run the chosen command; returns the exit status.

    No traceback reaches the person: Ctrl-C exits 130, a closed pipe 0, and an unexpected exception
    (a bug) prints one line naming a file that holds the traceback and exits 70 (set SKILLC_DEBUG=1
    to let it through instead).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    from skillc.logs import configure

    configure(args.verbose, args.quiet, args.log_level or os.environ.get("SKILLC_LOG_LEVEL") or None)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        print(f"\nskillc {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: not an error. Stop Python's own flush complaining.
        with contextlib.suppress(Exception):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        if os.environ.get("SKILLC_DEBUG"):
            raise
        report = _save_traceback(exc)
        where = f" (details in {report}; please report it)" if report else ""
        print(f"skillc {args.command}: internal error: {type(exc).__name__}: {_one_line(exc)}{where}", file=sys.stderr)
        return 70


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] + ("…" if len(text) > 300 else "")


def _save_traceback(exc: BaseException) -> str | None:
    """Write the traceback to a temp file; its path, or None when even that fails."""
    try:
        fd, path = tempfile.mkstemp(prefix="skillc-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"skillc {' '.join(sys.argv[1:])}\n\n")
            fh.write("".join(traceback.format_exception(exc)))
        return path
    except OSError:
        return None
