"""`skillc scenario run FILE…`: regression-test skills with scripted conversations."""
from __future__ import annotations

import argparse
import sys

HELP = "run scripted scenarios through the real runtime and check their traces"
DESCRIPTION = """\
Run scenario files (conformance/FORMAT.md): each compiles its inline studio, serves its canned
tools from an in-process MCP server (faults included), plays the scripted model turn by turn
through the real runtime and store, and checks the expectations against the trace.

Exit status: 0 when every expectation of every file holds, 1 when any fails, 2 on bad input.

examples:
  skillc scenario run examples/scenarios/*.yaml
  skillc scenario run approval.yaml --trace approval.trace.jsonl
"""


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    run = sub.add_parser("run", help="run scenario files", description=DESCRIPTION,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("files", nargs="+", metavar="FILE", help="scenario YAML files")
    run.add_argument("--trace", metavar="PATH", help="write the trace (JSON lines) of a single scenario to PATH")
    run.add_argument("-q", "--quiet", action="store_true", help="print failures and the summary only")


def run(args: argparse.Namespace) -> int:
    if args.trace and len(args.files) != 1:
        print("skillc scenario run: --trace takes exactly one scenario file", file=sys.stderr)
        return 2
    from skillc.scenario.runner import report, run_files

    results = run_files(args.files, trace_path=args.trace)
    for r in results:
        if not (args.quiet and r.ok):
            print(report(r))
    passed = sum(r.ok for r in results)
    errors = sum(r.error is not None for r in results)
    print(f"{passed} passed, {len(results) - passed} failed")
    if args.trace:
        print(f"trace written to {args.trace}")
    if errors and errors == len(results) - passed:
        return 2 if passed == 0 and errors == len(results) else 1
    return 0 if passed == len(results) else 1
