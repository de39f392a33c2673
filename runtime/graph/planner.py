"""Routing, intent and planning (§1.2, §3 mode, §7 providers, §10.1), with the shortcuts that skip
the model: one loadable agent (no `route`), one loadable skill (no `intent`), one REACT candidate
(no `plan`: a single node `n1` targeting the contract's target).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillc.runtime.loop.completion import resolve_target, write_tools
from skillc.runtime.words.errors import SkillcError
from skillc.runtime.model.base import ModelRequest
from skillc.runtime.loop.prompting import render, render_for_message
from skillc.runtime.words.errors import ErrorName
from skillc.runtime.words.vocab import Mode, NodeKind

if TYPE_CHECKING:
    from skillc.runtime.seam.seams import SessionEnv
    from skillc.runtime.words.event_types import PlanVia, RouteVia


class PlanningFailed(SkillcError):
    """No task graph can be planned: `name` is the error name (e.g. PROVIDER_UNAVAILABLE)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


@dataclass
class PlannedNode:
    """One node of a planned task graph."""

    node: str
    skill: str
    target: str | None
    deps: list[str] = field(default_factory=list)
    kind: NodeKind = NodeKind.MAIN


async def route(env: SessionEnv, message: str) -> tuple[str, RouteVia]:
    """(agent_code, via): `only` when one agent is loadable, else the model chooses by mission."""
    agents = env.loadable_agents()
    if not agents:
        raise PlanningFailed(ErrorName.SKILL_NOT_FOUND, "no agent has a loadable skill")
    if len(agents) == 1:
        return agents[0], "only"
    prompt = render("route.j2", agents=[_Obj(env.agent_profile(a)) for a in agents], message=message)
    schema = {"type": "object", "properties": {"agent": {"type": "string", "enum": agents}}, "required": ["agent"]}
    reply = await env.model.complete(ModelRequest("route", [{"role": "user", "content": prompt}], answer_schema=schema))
    choice = reply.choice.get("agent") if isinstance(reply.choice, dict) else reply.choice
    if choice not in agents:
        raise PlanningFailed(ErrorName.SKILL_NOT_FOUND, f"the model routed to an unknown agent {choice!r}")
    return choice, "model"


async def choose_skills(env: SessionEnv, agent: str, message: str) -> list[str]:
    """Candidate skills: the only one, or the model's choice over the skill catalog."""
    skills = env.agent_skills(agent)
    if not skills:
        raise PlanningFailed(ErrorName.SKILL_NOT_FOUND, f"agent {agent} has no loadable skill")
    if len(skills) == 1:
        return skills
    profile = env.agent_profile(agent)
    # the catalog depends on the studio only: rendered once per version of it (a reloaded skill is
    # a new module object), not per turn (issue 12: 0.8 ms per call with 1,000 skills)
    key = (tuple(profile.items()), tuple(skills))
    modules = tuple(env.skill_module(k) for k in skills)
    prompt = render_for_message("intent.j2", key, modules, message, lambda: {
        "agent": _Obj(profile), "skills": [{"key": k, "semantic_desc": env.skill_module(k).SKILL.semantic_desc,
                                            "name": env.skill_module(k).SKILL.name} for k in skills]})
    schema = {"type": "object", "properties": {"skills": {"type": "array", "items": {"type": "string", "enum": skills}}},
              "required": ["skills"]}
    reply = await env.model.complete(ModelRequest("intent", [{"role": "user", "content": prompt}], answer_schema=schema))
    chosen = reply.choice.get("skills") if isinstance(reply.choice, dict) else reply.choice
    picked = [k for k in (chosen or []) if isinstance(k, str) and k in skills]
    return list(dict.fromkeys(picked)) or skills[:1]


async def plan(env: SessionEnv, agent: str, candidates: list[str], message: str) -> tuple[list[PlannedNode], PlanVia]:
    """The task graph and how it was made (`shortcut`, `model`, `fallback`), providers inserted."""
    if len(candidates) == 1 and env.skill_module(candidates[0]).SKILL.mode == Mode.REACT:
        module = env.skill_module(candidates[0])
        nodes: list[PlannedNode] = [PlannedNode("n1", candidates[0], resolve_target(module, None))]
        via: PlanVia = "shortcut"
    else:
        nodes, via = await _model_plan(env, agent, candidates, message)
    return insert_providers(env, agent, nodes), via


async def _model_plan(env: SessionEnv, agent: str, candidates: list[str],
                      message: str) -> tuple[list[PlannedNode], PlanVia]:
    skills = []
    for k in candidates:
        m = env.skill_module(k)
        skills.append({"key": k, "mode": m.SKILL.mode, "semantic_desc": m.SKILL.semantic_desc, "name": m.SKILL.name,
                       "writes": sorted(write_tools(m)), "manual": m.SKILL.manual})
    prompt = render("plan.j2", agent=_Obj(env.agent_profile(agent)), skills=skills, message=message)
    schema = {"type": "object", "required": ["nodes"], "properties": {"nodes": {"type": "array", "items": {
        "type": "object", "required": ["id", "skill"], "properties": {
            "id": {"type": "string"}, "skill": {"type": "string", "enum": candidates},
            "target": {"type": "string"}, "deps": {"type": "array", "items": {"type": "string"}}}}}}}
    reply = await env.model.complete(ModelRequest("plan", [{"role": "user", "content": prompt}], answer_schema=schema))
    nodes = validate_plan(env, reply.choice, candidates)
    if nodes is None:
        return fallback_plan(env, candidates), "fallback"
    return nodes, "model"


def validate_plan(env: SessionEnv, choice: Any, candidates: list[str]) -> list[PlannedNode] | None:
    """The model's plan as nodes, or None when it is unusable (unknown skills, bad ids, cycles)."""
    raw = choice.get("nodes") if isinstance(choice, dict) else None
    if not isinstance(raw, list) or not raw:
        return None
    nodes: list[PlannedNode] = []
    ids: set[str] = set()
    for item in raw:
        if not isinstance(item, dict):
            return None
        nid, skill = item.get("id"), item.get("skill")
        if not isinstance(nid, str) or not nid or nid in ids or skill not in candidates:
            return None
        deps = item.get("deps") or []
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            return None
        target = item.get("target") if isinstance(item.get("target"), str) else None
        nodes.append(PlannedNode(nid, skill, resolve_target(env.skill_module(skill), target), list(deps)))
        ids.add(nid)
    for n in nodes:
        if any(d not in ids for d in n.deps):
            return None
    order = _topological_order(nodes)
    if order is None:
        return None
    return sorted(nodes, key=lambda n: order[n.node])


def _topological_order(nodes: list[PlannedNode]) -> dict[str, int] | None:
    """Position of each node in dependency order, ties broken by plan order (the lexicographical
    topological sort); None when the dependencies form a cycle. Plain Kahn: a plan has a handful
    of nodes, not worth importing a graph library at start-up."""
    position = {n.node: i for i, n in enumerate(nodes)}
    waiting = {n.node: len(set(n.deps)) for n in nodes}
    users: dict[str, list[str]] = {n.node: [] for n in nodes}
    for n in nodes:
        for d in set(n.deps):
            users[d].append(n.node)
    ready = [(position[nid], nid) for nid, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order: dict[str, int] = {}
    while ready:
        _, nid = heapq.heappop(ready)
        order[nid] = len(order)
        for user in users[nid]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (position[user], user))
    return order if len(order) == len(nodes) else None


def fallback_plan(env: SessionEnv, candidates: list[str]) -> list[PlannedNode]:
    """The safe default: one node per candidate, in order, each after the previous."""
    nodes = []
    for i, key in enumerate(candidates, 1):
        deps = [f"n{i - 1}"] if i > 1 else []
        nodes.append(PlannedNode(f"n{i}", key, resolve_target(env.skill_module(key), None), deps))
    return nodes


def insert_providers(env: SessionEnv, agent: str, nodes: list[PlannedNode]) -> list[PlannedNode]:
    """§7: a prerequisite node per input with a provider, unless its shared value already exists.

    Provider relationships are the compiled template's (compiler/graphs.py): its edges, and the
    inputs it marked unavailable (provider unknown, of another agent, the skill itself, or on a
    provider cycle), which fail planning with PROVIDER_UNAVAILABLE. A provider that is already a
    node of the plan only adds the dependency; an inserted provider gets its own providers the
    same way (a provider of a provider runs first). Inserted ids are `p1, p2, …`, skipping any id
    the plan already uses.
    """
    placement = _Providers(env, agent, nodes)
    for n in nodes:
        placement.place(n, frozenset({n.skill}))
    return placement.out


class _Providers:
    """One plan's provider insertion: the nodes placed so far, by id and by skill."""

    def __init__(self, env: SessionEnv, agent: str, nodes: list[PlannedNode]) -> None:
        self.env, self.agent = env, agent
        self.out: list[PlannedNode] = []  # providers first, each node after what it depends on
        self.by_skill: dict[str, str] = {}
        for n in nodes:
            self.by_skill.setdefault(n.skill, n.node)
        self.taken = {n.node for n in nodes}
        self.skills = set(env.agent_skills(agent))
        self.planned = {n.node: n for n in nodes}

    def place(self, n: PlannedNode, chain: frozenset[str]) -> None:
        """Give `n` a dependency on a provider of each input that needs one, then append it."""
        for link in self.env.provider_inputs(self.agent, n.skill):
            provider = link.provider
            # the template's skills are the compile-time ones: a provider since unloaded is unavailable too
            if link.reason is not None or provider not in self.skills:
                why = " (providers form a cycle)" if link.reason == "cycle" else ""
                raise PlanningFailed(ErrorName.PROVIDER_UNAVAILABLE,
                                     f"input {link.input} of {n.skill} needs provider {provider}, which this agent cannot run{why}")
            if link.prefix in ("shared", "session") and self.env.value_exists(link.prefix, link.share_key):
                continue
            if provider in self.by_skill:
                pid = self.by_skill[provider]
                if pid not in n.deps and pid != n.node and not self.reaches(pid, n.node):
                    n.deps.append(pid)
                continue
            if provider in chain:  # the template is a DAG; a hand-edited one must not recurse forever
                continue
            n.deps.append(self.insert(provider, chain))
        self.out.append(n)

    def insert(self, provider: str, chain: frozenset[str]) -> str:
        """A new provider node (its own providers placed first); its id."""
        k = 1
        while f"p{k}" in self.taken:
            k += 1
        pid = f"p{k}"
        self.taken.add(pid)
        pn = PlannedNode(pid, provider, resolve_target(self.env.skill_module(provider), None), [], NodeKind.PROVIDER)
        self.planned[pid] = pn
        self.by_skill[provider] = pid
        self.place(pn, chain | {provider})
        return pid

    def reaches(self, start: str, goal: str) -> bool:
        """`goal` is upstream of `start` already (a new edge goal -> start would close a cycle)."""
        seen, stack = set(), [start]
        while stack:
            cur = stack.pop()
            if cur == goal:
                return True
            if cur in seen or cur not in self.planned:
                continue
            seen.add(cur)
            stack.extend(self.planned[cur].deps)
        return False


class _Obj:
    """Attribute access over a mapping, for templates."""

    def __init__(self, data: Any) -> None:
        self._data = data if isinstance(data, dict) else getattr(data, "__dict__", {})

    def __getattr__(self, name: str) -> Any:
        return self._data.get(name, "")
