"""Task-graph templates: per agent, a networkx DiGraph of its loadable skills (spec §7, §10, §15).

Nodes are skill keys with the facts planning needs (mode, target, delegatable, read_only, the
skill's short description); an edge provider -> consumer says the consumer's input is supplied by
running the provider first (§7 `inputs.provider`). A provider that is unknown, belongs to another
agent, is the skill itself, or closes a cycle is a warning: the skill still loads, its input is
listed under the node's `unavailable_inputs` and the runtime fails planning with
PROVIDER_UNAVAILABLE when a plan needs it. The graph's attributes carry the agent profile and the
delegation catalog (§15: delegatable and no WRITE tool). Templates are stored as node-link JSON,
which the runtime loads with networkx alone.
"""
from __future__ import annotations

from typing import Any

import networkx as nx

from skillc.compiler import ir
from skillc.compiler.codegen_literals import parts_of
from skillc.compiler.diagnostics import Diagnostic
from skillc.compiler.frontend import agent_diagnostics

PROFILE_FIELDS: tuple[str, ...] = (
    "agent_name",
    "identity_desc",
    "mission_desc",
    "boundary_desc",
    "style_desc",
    "principle_desc",
)

# Diagnostic codes of this module (graph templates).
PROVIDER_UNKNOWN = "SC401"
PROVIDER_OTHER_AGENT = "SC402"
PROVIDER_SELF = "SC403"
PROVIDER_CYCLE = "SC404"


def skill_facts(skill: ir.SkillProfile, contract: ir.Contract) -> dict[str, Any]:
    """What graph templates need of one skill, as JSON data (kept in the manifest, so an
    incremental build rebuilds graphs without re-parsing unchanged skills)."""
    writes = sorted(name for name, t in contract.tools.items() if t.side_effect == "WRITE")
    # §10.1: the contract target counts only when it is a WRITE tool of the skill in toolNames.
    target = contract.target if contract.target in writes and contract.target in skill.tool_names else None
    inputs = []
    for spec in contract.inputs.values():
        expr = spec.from_
        prefix = expr.kind if expr is not None else None
        share_key = None
        if isinstance(expr, (ir.SharedRef, ir.SessionRef)):
            share_key = [list(p) for p in parts_of(expr.path)]  # support.py's compact parts
        span = spec.span or spec.key_span
        inputs.append(
            {
                "name": spec.name,
                "provider": spec.provider,
                "prefix": prefix,
                "share_key": share_key,
                "required": spec.required,
                "line": span.line if span else 1,
                "column": span.column if span else 1,
            }
        )
    return {
        "skill_name": skill.skill_name,
        "semantic_desc": skill.semantic_desc or skill.skill_name,
        "mode": contract.mode,
        "delegatable": contract.delegatable,
        "read_only": not writes,
        "target": target,
        "write_tools": writes,
        "inputs": inputs,
    }


def _warn(code: str, message: str, key: str, files: dict[str, str], item: dict[str, Any]) -> Diagnostic:
    return Diagnostic(
        code=code,
        severity="warning",
        message=message,
        skill=key,
        file=files.get(key),
        line=item.get("line", 1),
        column=item.get("column", 1),
        end_line=item.get("line", 1),
        end_column=item.get("column", 1) + 1,
    )


def build_agent_graph(
    agent: ir.AgentProfile,
    facts: dict[str, dict[str, Any]],
    all_keys: set[str] | frozenset[str] = frozenset(),
    files: dict[str, str] | None = None,
) -> tuple[nx.DiGraph, list[Diagnostic]]:
    """The agent's task-graph template over its loadable skills (`facts`: key -> skill_facts of
    every loadable skill of the studio; `all_keys`: every skill key of the studio, loadable or not;
    `files`: key -> contract file, for diagnostics only)."""
    files = files or {}
    diags: list[Diagnostic] = []
    members = sorted(k for k in set(agent.skills) if k in facts)
    # The same agent checks as the front end: an incremental build re-checks only changed skills.
    diags += agent_diagnostics(agent, all_keys, set(facts))
    g = _skill_nodes(agent, members, facts)
    for key in members:
        _link_inputs(g, key, agent, facts, all_keys, files, diags)
    _break_cycles(g, facts, files, diags)
    g.graph["delegation_catalog"] = [k for k in members if g.nodes[k]["delegatable"] and g.nodes[k]["read_only"]]
    return g, diags


def _skill_nodes(agent: ir.AgentProfile, members: list[str], facts: dict[str, dict[str, Any]]) -> nx.DiGraph:
    """The template without edges: the agent profile as graph attributes, one node per member skill."""
    g = nx.DiGraph()
    g.graph["agent_code"] = agent.agent_code
    for name in PROFILE_FIELDS:
        g.graph[name] = getattr(agent, name)
    for key in members:
        f = facts[key]
        g.add_node(
            key,
            skill_name=f["skill_name"],
            semantic_desc=f["semantic_desc"],
            mode=f["mode"],
            delegatable=f["delegatable"],
            read_only=f["read_only"],
            target=f["target"],
            write_tools=list(f["write_tools"]),
            unavailable_inputs=[],
        )
    return g


def _link_inputs(g: nx.DiGraph, key: str, agent: ir.AgentProfile, facts: dict[str, dict[str, Any]], all_keys: set[str] | frozenset[str],
                 files: dict[str, str], diags: list[Diagnostic]) -> None:
    """An edge provider -> `key` for each input of `key` with a usable provider; an input whose
    provider is not usable is listed under the node's `unavailable_inputs`, with a warning."""
    # `position` is the input's place in the contract: the runtime inserts providers in that
    # order (ids p1, p2, …), which edges grouped by provider do not keep.
    for position, item in enumerate(facts[key]["inputs"]):
        provider = item["provider"]
        if not provider:
            continue
        reason = _unusable_provider(key, item, g, agent, facts, all_keys, files, diags)
        if reason:
            g.nodes[key]["unavailable_inputs"].append(
                {"input": item["name"], "provider": provider, "reason": reason, "position": position})
            continue
        link = {"input": item["name"], "prefix": item["prefix"], "share_key": item["share_key"], "required": item["required"],
                "position": position}
        if g.has_edge(provider, key):
            g.edges[provider, key]["inputs"].append(link)
        else:
            g.add_edge(provider, key, input=link["input"], prefix=link["prefix"], share_key=link["share_key"], inputs=[link])


def _unusable_provider(key: str, item: dict[str, Any], g: nx.DiGraph, agent: ir.AgentProfile, facts: dict[str, dict[str, Any]],
                       all_keys: set[str] | frozenset[str], files: dict[str, str], diags: list[Diagnostic]) -> str | None:
    """Why the input's provider cannot run first ("self", "other_agent", "unknown"), warned in
    `diags`; None when it is a member of the agent (the graph's nodes) other than `key`."""
    provider = item["provider"]
    if provider == key:
        diags.append(_warn(PROVIDER_SELF, f"input {item['name']!r}: a skill cannot provide its own input", key, files, item))
        return "self"
    if provider in g:
        return None
    if provider in facts or provider in all_keys:
        diags.append(
            _warn(
                PROVIDER_OTHER_AGENT,
                f"input {item['name']!r}: provider {provider!r} is not a loadable skill of agent {agent.agent_code!r}",
                key,
                files,
                item,
            )
        )
        return "other_agent"
    from skillc.compiler.authoring import did_you_mean

    diags.append(
        _warn(PROVIDER_UNKNOWN, f"input {item['name']!r}: provider {provider!r} is not a skill of the studio", key, files, item)
        .model_copy(update={"help": did_you_mean(provider, all_keys)})
    )
    return "unknown"


def _break_cycles(g: nx.DiGraph, facts: dict[str, dict[str, Any]], files: dict[str, str], diags: list[Diagnostic]) -> None:
    """Remove every provider edge on a cycle (the template stays a DAG) and mark those inputs."""
    while True:
        try:
            cycle = nx.find_cycle(g)
        except nx.NetworkXNoCycle:
            return
        path = " -> ".join([u for u, _ in cycle] + [cycle[0][0]])
        for u, v in cycle:
            for link in g.edges[u, v]["inputs"]:
                item: dict[str, Any] = next((i for i in facts[v]["inputs"] if i["name"] == link["input"]), {})
                diags.append(_warn(PROVIDER_CYCLE, f"input {link['input']!r}: providers form a cycle ({path})", v, files, item))
                g.nodes[v]["unavailable_inputs"].append(
                    {"input": link["input"], "provider": u, "reason": "cycle", "position": link["position"]})
            g.remove_edge(u, v)


def graph_to_data(g: nx.DiGraph) -> dict[str, Any]:
    """JSON data of a template (networkx node-link form, edges under "edges")."""
    data: dict[str, Any] = nx.node_link_data(g, edges="edges")
    return data


def to_mermaid(g: nx.DiGraph) -> str:
    """A Mermaid flowchart of a template; node ids are counters, labels are quoted data."""
    ids = {key: f"s{i}" for i, key in enumerate(sorted(g.nodes))}
    lines = ["flowchart LR"]
    for key in sorted(g.nodes):
        attrs = g.nodes[key]
        tags = [attrs["mode"]]
        if attrs.get("target"):
            tags.append(f"target {attrs['target']}")
        if key in g.graph.get("delegation_catalog", []):
            tags.append("delegatable")
        lines.append(f'    {ids[key]}["{_mermaid_text(key)}<br/>{_mermaid_text(", ".join(tags))}"]')
    for u, v in sorted(g.edges):
        label = ", ".join(link["input"] for link in g.edges[u, v]["inputs"])
        lines.append(f'    {ids[u]} -->|"{_mermaid_text(label)}"| {ids[v]}')
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    # Mermaid has no escape for a double quote inside a quoted label: use its entity codes.
    return "".join(f"#{ord(ch)};" if ch in '"<>#|\n\r' else ch for ch in text)


def to_dot(g: nx.DiGraph) -> str:
    """Graphviz DOT text of a template (every id and label a quoted, escaped string)."""

    def q(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'

    lines = [f"digraph {q(str(g.graph.get('agent_code', 'agent')))} {{", "    rankdir=LR;"]
    for key in sorted(g.nodes):
        attrs = g.nodes[key]
        label = f"{key}\n{attrs['mode']}" + (f"\ntarget {attrs['target']}" if attrs.get("target") else "")
        shape = "ellipse" if key in g.graph.get("delegation_catalog", []) else "box"
        lines.append(f"    {q(key)} [label={q(label)}, shape={shape}];")
    for u, v in sorted(g.edges):
        label = ", ".join(link["input"] for link in g.edges[u, v]["inputs"])
        lines.append(f"    {q(u)} -> {q(v)} [label={q(label)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
