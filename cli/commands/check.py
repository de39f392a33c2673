"""`skillc check [SOURCE]`: parse and validate a studio, print diagnostics like a compiler."""
from __future__ import annotations

import argparse
import json
import sys

from skillc.commands import CONFIG_HELP, SOURCE_HELP, load_source

HELP = "validate a studio's skill contracts and print diagnostics"
DESCRIPTION = """\
Parse and validate every ACTIVE skill of a studio (a directory with agents/ and skills/, or a
SQLite file with the four studio tables). Diagnostics print as file:line:col with a caret excerpt;
positions are inside each skill's contract text.

A skill with an error is dropped (the others still load); warnings and notes do not stop it.

examples:
  skillc check                          the studio of ./skillc.toml (or $SKILLC_CONFIG; else the example)
  skillc check --strict path/to/studio  warnings fail the check (CI)
  skillc check --servers --config examples/skillc.toml   against the live MCP servers
  skillc check path/to/studio
  skillc check studio.sqlite --format json | jq '.summary'

Besides the contracts, a directory studio's agents/*.yaml and skills/*/skill.yaml are checked
against their schema (unknown keys, wrong types, status casing, a missing manual.md).
--strict makes every warning an error, for CI. --servers starts the MCP servers of the config
(--config, $SKILLC_CONFIG or ./skillc.toml), lists each one's tools, and reports toolNames no
server serves, tools whose MCP annotations disagree with the contract (destructiveHint on a
read: warning; readOnlyHint on a WRITE: note), contract arguments the tool's inputSchema does not
have and required properties the contract refuses (warnings), a server that cannot be reached
(which server, which URL, what failed), and two servers listing one tool name (an error: `skillc
serve` refuses to start on it).

Two findings fail the check even without --strict, because the studio cannot work as written:
an agent left with no loadable skill (every request routed to it fails at planning), and a write
no call can ever pass (a required argument whose only source is EVIDENCE while no tool the skill
may call extracts any, e.g. its lookup tool missing from tools:). The last lines say what the
run would do.

exit status: 0 clean or warnings only, 1 errors (some skill does not load, an agent has no
loadable skill, a write can never run, or any warning with --strict), 2 bad invocation or
unreadable source or config."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc check`."""
    parser.add_argument("source", nargs="?", help=SOURCE_HELP)
    parser.add_argument("--config", metavar="PATH", help=CONFIG_HELP)
    parser.add_argument("--format", choices=("human", "json"), default="human", help="output format (default: human)")
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors (exit 1), for CI")
    parser.add_argument("--servers", action="store_true",
                        help="also start the config's MCP servers, list their tools and compare them with the studio")


def run(args: argparse.Namespace) -> int:
    """Check the studio at args.source; returns the exit status."""
    config = None
    if args.servers:
        from skillc.commands import read_config

        config = read_config("check", args.config)
        if config is None:
            return 2
    args.source, studio = load_source("check", args.source, args.config, config)
    if studio is None:
        return 2
    from skillc.compiler.blockers import run_blockers
    from skillc.compiler.diagnostics import count, render, strict
    from skillc.compiler.frontend import check_studio

    result = check_studio(studio)
    if args.servers:
        from skillc.servers import check_servers

        found = check_servers("check", config, result, sys.stderr if args.format == "json" else sys.stdout)
        if found is None:
            return 2
        result.diagnostics += found
    if args.strict:
        result.diagnostics = strict(result.diagnostics)
    totals = count(result.diagnostics)
    blockers = run_blockers(result)
    loaded, rejected = sorted(result.contracts), sorted(result.rejected)
    if args.format == "json":
        doc = {
            "source": str(args.source),
            "agents": [a.agent_code for a in studio.agents],
            "loaded": loaded,
            "rejected": rejected,
            "summary": {"skills": len(loaded) + len(rejected), **{f"{k}s": v for k, v in totals.items()}},
            "diagnostics": [d.model_dump() for d in result.diagnostics],
            "blockers": blockers,
        }
        json.dump(doc, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        for d in result.diagnostics:
            print(render(d))
        parts = [f"{totals['error']} error{'s' * (totals['error'] != 1)}", f"{totals['warning']} warning{'s' * (totals['warning'] != 1)}"]
        if totals["note"]:
            parts.append(f"{totals['note']} note{'s' * (totals['note'] != 1)}")
        n_skills, n_agents = len(loaded) + len(rejected), len(studio.agents)
        line = (f"checked {n_skills} skill{'s' * (n_skills != 1)} of {n_agents} agent{'s' * (n_agents != 1)} in {args.source}: "
                f"{len(loaded)} loaded, {len(rejected)} rejected; {', '.join(parts)}")
        if rejected:
            line += f"\nrejected: {', '.join(rejected)}"
        print(line)
        for blocker in blockers:
            print(f"error: {blocker}")
    return 1 if totals["error"] or blockers else 0
