"""`skillc diff OLD NEW`: a contract change reviewed as a behaviour change, skill by skill."""
from __future__ import annotations

import argparse
import sys

HELP = "what changed in the behaviour of each skill between two versions of a studio"
DESCRIPTION = """\
Compare two versions of a studio and say, per skill, what changed in behaviour, in the words a
reviewer reads: an argument that now accepts values the model made up (MODEL), a write that no
longer asks for approval or lost its idempotency key, a success rule loosened, a verify removed,
a new tool in toolNames, a skill that now fails to load, … Risky changes are marked RISKY.

OLD and NEW are each one of:
  a compiled directory     what `skillc compile` wrote (it has manifest.json), e.g. generated
  a studio                 a studio directory or SQLite file; it is compiled into a temporary
                           directory first
  a git revision REV:PATH  PATH (from the repository's root) as it was at REV, e.g.
                           HEAD~1:examples/studio or main:generated; read with `git archive`

Compiled modules are read, never run: diffing a pull request's generated/ is safe.

examples:
  skillc diff HEAD~1:examples/studio examples/studio        what the last commit changed
  skillc diff main:generated generated                       review a branch's compiled validators
  skillc diff old-studio/ new-studio/ --format json
  skillc diff origin/main:examples/studio examples/studio --fail-on risky     in CI

exit status: 0 compared (changes or not), 1 a change at the --fail-on level was found,
2 OLD or NEW cannot be read."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc diff`."""
    parser.add_argument("old", metavar="OLD", help="compiled directory, studio, or git REV:PATH")
    parser.add_argument("new", metavar="NEW", help="compiled directory, studio, or git REV:PATH")
    parser.add_argument("--format", choices=("human", "json"), default="human", help="output format (default: human)")
    parser.add_argument("--fail-on", choices=("risky", "any"), default=None,
                        help="exit 1 when a risky change (or any change) is found: for CI")


def run(args: argparse.Namespace) -> int:
    """Compare args.old with args.new; returns the exit status."""
    from skillc.compiler.diff import DiffInputError, diff, render_json, render_text

    try:
        changes = diff(args.old, args.new)
    except DiffInputError as exc:
        print(f"skillc diff: error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render_json(changes) if args.format == "json" else render_text(changes))
    if args.fail_on == "risky" and any(c.risky for c in changes):
        return 1
    if args.fail_on == "any" and changes:
        return 1
    return 0
