"""`skillc graph AGENT [SOURCE]`: an agent's task-graph template as Mermaid, DOT or JSON."""
from __future__ import annotations

import argparse
import json
import sys

from skillc.commands import CONFIG_HELP, SOURCE_HELP, choose_studio
from pathlib import Path

HELP = "print an agent's task-graph template (mermaid, dot or json)"
DESCRIPTION = """\
Print the task-graph template of AGENT: its loadable skills, the inputs.provider edges between
them (§7), each skill's target and the delegation catalog (§15). SOURCE is a studio (compiled on
the fly) or a directory written by `skillc compile` (read without the compiler).

examples:
  skillc graph editor                              Mermaid (paste into a Markdown file)
  skillc graph publisher examples/studio --format dot | dot -Tsvg > publisher.svg
  skillc graph editor generated --format json      from a compiled directory

exit status: 0 ok, 2 unknown agent or unreadable source."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc graph`."""
    parser.add_argument("agent", help="agent_code")
    parser.add_argument("source", nargs="?", help=SOURCE_HELP)
    parser.add_argument("--config", metavar="PATH", help=CONFIG_HELP)
    parser.add_argument("--format", choices=("mermaid", "dot", "json"), default="mermaid", help="output format (default: mermaid)")


def _from_compiled(agent: str, out_dir: Path):  # -> nx.DiGraph | None
    from skillc.runtime.compiled.loader import CompiledStudioError, load_compiled

    try:
        studio = load_compiled(out_dir)
    except CompiledStudioError as exc:
        print(f"skillc graph: error: {exc}", file=sys.stderr)
        return None
    template = studio.agents.get(agent)
    return template.graph if template else None


def _from_studio(agent: str, source: str):  # -> nx.DiGraph | None
    from skillc.compiler import graphs
    from skillc.compiler.diagnostics import render
    from skillc.compiler.frontend import check_skill
    from skillc.compiler.sources import load_studio

    studio = load_studio(source)
    profile = next((a for a in studio.agents if a.agent_code == agent and a.status == "ACTIVE"), None)
    if profile is None:
        return None
    wanted = set(profile.skills)
    facts = {}
    for skill in studio.skills:
        if skill.skill_key in wanted and skill.status == "ACTIVE":
            contract, _ = check_skill(skill)
            if contract is not None:
                facts[skill.skill_key] = graphs.skill_facts(skill, contract)
    all_keys = {s.skill_key for s in studio.skills if s.status == "ACTIVE"}
    g, diags = graphs.build_agent_graph(profile, facts, all_keys)
    for d in diags:
        print(render(d), file=sys.stderr)
    return g


def _near_agent(agent: str, src: Path) -> str | None:
    """`did you mean 'x'?` over the agent codes of a compiled directory or a studio."""
    from difflib import get_close_matches

    try:
        if (src / "manifest.json").is_file():
            codes = list(json.loads((src / "manifest.json").read_text(encoding="utf-8")).get("agents", {}))
        else:
            from skillc.compiler.sources import load_studio

            codes = [a.agent_code for a in load_studio(src).agents]
    except Exception:  # noqa: BLE001 - a hint is optional; the error line stands on its own
        return None
    close = get_close_matches(agent, sorted(codes), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


def run(args: argparse.Namespace) -> int:
    """Print the template of args.agent; returns the exit status."""
    args.source = choose_studio("graph", args.source, args.config)
    if args.source is None:
        return 2
    from skillc.compiler.sources import SourceError

    src = Path(args.source)
    try:
        g = _from_compiled(args.agent, src) if (src / "manifest.json").is_file() else _from_studio(args.agent, args.source)
    except SourceError as exc:
        print(f"skillc graph: error: {exc}", file=sys.stderr)
        return 2
    if g is None:
        hint = _near_agent(args.agent, src)
        print(f"skillc graph: error: no agent {args.agent!r} in {args.source}" + (f"; {hint}" if hint else ""),
              file=sys.stderr)
        return 2
    from skillc.compiler import graphs

    if args.format == "json":
        sys.stdout.write(json.dumps(graphs.graph_to_data(g), ensure_ascii=False, indent=2, sort_keys=True) + "\n")
    elif args.format == "dot":
        sys.stdout.write(graphs.to_dot(g))
    else:
        sys.stdout.write(graphs.to_mermaid(g))
    return 0
