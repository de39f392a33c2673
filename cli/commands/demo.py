"""`skillc demo`: compile the example studio and play a conversation against a real MCP server."""
from __future__ import annotations

import argparse

HELP = "see skillc work: compile the example studio and play a scripted conversation"
DESCRIPTION = """\
Compiles the bundled example studio, starts the example CMS MCP server as a real process, and
plays a scripted conversation through the real runtime, showing each step: the tool labels as
progress, a write that needs a lookup and then the user's approval, a made-up id refused, a write
whose answer is lost verified by the contract's verify tool, and the replies. No model or network
is needed (the LLM side is scripted). Ends with where the trace (JSON lines) was written.
Works from any directory; set NO_COLOR=1 for plain output on a terminal.

examples:
  skillc demo
  skillc demo --trace /tmp/demo.jsonl && jq -c 'select(.type == "tool.call")' /tmp/demo.jsonl

exit status: 0 the demo ran, 1 it went wrong (a runtime error; see the transcript),
2 the trace cannot be written.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc demo`."""
    parser.add_argument("--trace", metavar="PATH", help="where to write the trace (default .skillc/demo-trace.jsonl)")


def run(args: argparse.Namespace) -> int:
    """Run `skillc demo`; returns the exit status."""
    from skillc.demo import main

    return main(args.trace)
