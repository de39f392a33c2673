"""`skillc scenario run FILE…`: regression-test skills with scripted conversations."""
from __future__ import annotations

import argparse
import sys

HELP = "run scripted scenarios through the real runtime and check their traces"
DESCRIPTION = """\
Run scenario files (format: docs/reference/scenarios.md). Each file holds a studio (inline, or
`studio: path/to/studio` relative to the file), canned business tools, a platform identity and a
conversation whose LLM side is scripted. From pytest, `pytest -p skillc.pytest_plugin` runs every
*.scenario.yaml file as one test. For each file
the studio is compiled on the fly, the canned tools are served by an in-process MCP server
(faults included: timeout, io, rpc, unreachable, invalid_params, crash), `servers:` are started
as real MCP processes ({tmp} in their args/env is a fresh temp folder), the turns are played
through the real runtime and store, and the expectations are checked against the trace.

The report names, for each failure, the turn, the expectation and the nearest event; it also
lists runtime errors, script entries the runtime never asked for, and servers that did not start.

exit status:
  0  every expectation of every file holds
  1  some scenario failed (an expectation is unmet, or the runtime raised)
  2  bad input: a file is missing, not YAML, or not a well-formed scenario (takes precedence),
     or a bad invocation (e.g. --trace with several files)

examples:
  skillc scenario run examples/scenarios/*.yaml
  skillc scenario run approval.yaml --trace approval.trace.jsonl
"""


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc scenario`."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    run = sub.add_parser("run", help="run scenario files and check their traces", description=DESCRIPTION,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("files", nargs="+", metavar="FILE", help="scenario YAML files")
    run.add_argument("--trace", metavar="PATH", help="write the trace (JSON lines) of a single scenario to PATH")
    run.add_argument("-q", "--quiet", action="store_true", help="print failures and the summary only")


def exit_status(results: list) -> int:  # list[ScenarioResult]
    """2 when any file could not be run (bad input), else 1 when any failed, else 0."""
    if any(r.error is not None for r in results):
        return 2
    return 0 if all(r.ok for r in results) else 1


def run(args: argparse.Namespace) -> int:
    """Run args.files; returns the exit status (see DESCRIPTION)."""
    if args.trace and len(args.files) != 1:
        print(f"skillc scenario run: error: --trace takes exactly one scenario file, got {len(args.files)}",
              file=sys.stderr)
        return 2
    from skillc.logs import shown_elsewhere
    from skillc.scenario.runner import report, run_files

    shown_elsewhere("internal-error", "server-down")  # the report names both

    total = len(args.files)
    done = [0]

    def show(result) -> None:  # noqa: ANN001 (ScenarioResult; the import stays lazy)
        done[0] += 1
        ticker = total > 1 and args.quiet and sys.stderr.isatty()  # quiet runs still show progress
        if ticker:
            sys.stderr.write("\r\033[K")
        if not (args.quiet and result.ok):
            print(report(result, verbose=not args.quiet), flush=True)
        if ticker and done[0] < total:
            sys.stderr.write(f"[{done[0]}/{total}] scenarios run")
            sys.stderr.flush()

    results = run_files(args.files, trace_path=args.trace, on_result=show)
    passed = sum(r.ok for r in results)
    bad = sum(r.error is not None for r in results)
    summary = f"{passed} passed, {len(results) - passed - bad} failed"
    if bad:
        summary += f", {bad} not run (bad input)"
    print(summary)
    if args.trace and results and results[0].error is None:
        print(f"trace written to {args.trace}")
    return exit_status(results)
