"""`skillc audit verify TRACE`: recompute a trace's hash chain and name the first broken event."""
from __future__ import annotations

import argparse
import json
import os
import sys

HELP = "check that a trace was not altered: recompute its hash chain"
DESCRIPTION = """\
Every trace event carries `prev` (the hash of its session's previous event; the session's first
event, an anchor derived from the session id and the audit key) and `hash` (its own). `verify`
recomputes both for every event, in file order, and reports the first event that was altered
(its content does not match its hash), removed (its predecessor is not in the trace) or
reordered (it comes before its predecessor, or seq goes backwards).

A trace written with an audit key (SKILLC_AUDIT_KEY when it was written) verifies only with the
same key: pass --key-env NAME (default SKILLC_AUDIT_KEY) to read it from the environment.

examples:
  skillc audit verify run.trace.jsonl
  SKILLC_AUDIT_KEY=… skillc audit verify /var/log/skillc/trace.jsonl
  skillc audit verify --json run.trace.jsonl | jq .problem

exit status: 0 the chain holds, 1 an event was altered, removed or reordered, 2 the trace cannot
be read (missing file, a line that is not JSON)."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc audit`."""
    sub = parser.add_subparsers(dest="audit_command", metavar="ACTION", required=True)
    verify = sub.add_parser("verify", help="recompute the hash chain of a trace", description=DESCRIPTION,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    verify.add_argument("trace", metavar="TRACE", help="a JSON-lines trace file")
    verify.add_argument("--key-env", default="SKILLC_AUDIT_KEY", metavar="NAME",
                        help="environment variable holding the audit key (default SKILLC_AUDIT_KEY)")
    verify.add_argument("--json", action="store_true", help="print the verdict as JSON")


def run(args: argparse.Namespace) -> int:
    """Verify the trace; returns the exit status."""
    from skillc.runtime.telemetry.audit import verify
    from skillc.runtime.telemetry.trace import iter_events

    try:
        events = list(iter_events(args.trace))
    except OSError as exc:
        print(f"skillc audit: error: {args.trace}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"skillc audit: error: {args.trace}: not a JSON-lines trace: {exc}", file=sys.stderr)
        return 2
    key = os.environ.get(args.key_env) or None
    verdict = verify(events, key)
    if args.json:
        problem = verdict.problem
        print(json.dumps({"ok": verdict.ok, "events": verdict.events, "sessions": verdict.sessions,
                          "keyed": verdict.keyed, "notes": verdict.notes,
                          "problem": None if problem is None else {
                              "kind": problem.kind, "line": problem.line, "seq": problem.seq,
                              "type": problem.type, "session": problem.session, "message": problem.message}},
                         ensure_ascii=False, indent=2))
    else:
        for note in verdict.notes:
            print(f"note: {note}")
        if verdict.problem is not None:
            print(f"{args.trace}:{verdict.problem}")
        else:
            keyed = "keyed (HMAC-SHA-256)" if verdict.keyed else "unkeyed (SHA-256)"
            print(f"{args.trace}: OK: {verdict.events} events in {verdict.sessions} session(s), chain intact, {keyed}")
    return 0 if verdict.ok else 1
