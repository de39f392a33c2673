"""`skillc explain SKILL [SOURCE]`: per tool and argument, how values are bound, checked and asked."""
from __future__ import annotations

import argparse
import sys

from skillc.commands import CONFIG_HELP, SOURCE_HELP, load_source

HELP = "explain a skill's contract per tool and argument, with static checks"
DESCRIPTION = """\
For each tool and argument of SKILL: how its value is bound (from/const/when), which sources are
legal, what happens when it is missing. Then warnings for what §16 does not check at load: a
required argument no configured source can ever satisfy, from + sources ["USER"] without MODEL,
and missing.tool / verify.tool / target outside toolNames.

examples:
  skillc explain cms.article.lifecycle
  skillc explain invoice.issue path/to/studio

exit status: 0 ok (warnings included), 1 the skill does not load, 2 unknown skill or source."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc explain`."""
    parser.add_argument("skill", help="skill_key")
    parser.add_argument("source", nargs="?", help=SOURCE_HELP)
    parser.add_argument("--config", metavar="PATH", help=CONFIG_HELP)


def run(args: argparse.Namespace) -> int:
    """Explain args.skill of args.source; returns the exit status."""
    args.source, studio = load_source("explain", args.source, args.config)
    if studio is None:
        return 2
    from skillc.compiler.diagnostics import render
    from skillc.compiler.explain import explain
    from skillc.compiler.frontend import check_skill

    profile = next((s for s in studio.skills if s.skill_key == args.skill), None)
    if profile is None:
        from skillc.compiler.authoring import did_you_mean

        hint = did_you_mean(args.skill, [s.skill_key for s in studio.skills])
        print(f"skillc explain: error: no skill {args.skill!r} in {args.source}" + (f"; {hint}" if hint else ""),
              file=sys.stderr)
        return 2
    contract, diags = check_skill(profile)
    if contract is None:
        for d in diags:
            print(render(d))
        print(f"skill {args.skill} does not load")
        return 1
    lines, warnings = explain(profile, contract)
    print("\n".join(lines))
    for d in warnings:
        print(render(d))
    return 0
