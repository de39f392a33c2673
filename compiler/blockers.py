"""What a checked studio can never do at run time, whatever the user or the model says.

Most findings of `skillc check` are warnings because the studio still works around them. Two are
not: an agent left with no loadable skill (every request routed to it fails at planning), and a
write whose required argument no value can ever pass (every call of it is refused, so the node
that targets it can never finish). `skillc check` exits 1 on these even without --strict, with a
sentence saying what the run will do.
"""
from __future__ import annotations

from skillc.compiler import ir
from skillc.compiler.frontend import FrontendResult

# Sources the runtime can match a model's value against (§5.3); PLATFORM and CONTRACT come only
# from `from`/`const` bindings.
_MATCHABLE = frozenset({"USER", "EVIDENCE", "NODE_OUTPUT", "SHARED", "SESSION", "PRIOR_TASK", "MODEL"})


def run_blockers(result: FrontendResult) -> list[str]:
    """One sentence per thing that is certain to fail at run time, in studio order."""
    out: list[str] = []
    for agent in result.studio.agents:
        if agent.status != "ACTIVE":
            continue
        if not any(key in result.contracts for key in agent.skills):
            out.append(f"agent '{agent.agent_code}' has no loadable skill: at run time every request routed to it "
                       "fails at planning (SKILL_NOT_FOUND, \"no agent has a loadable skill\" when it is the only agent)")
    profiles = {p.skill_key: p for p in result.studio.skills}
    for key in sorted(result.contracts):
        if key in profiles:
            out += _dead_writes(profiles[key], result.contracts[key], _extracting_elsewhere(result, profiles, key))
    return out


def _extracting_elsewhere(result: FrontendResult, profiles: dict[str, ir.SkillProfile], key: str) -> bool:
    """Whether another loadable skill of an agent that has `key` has a callable tool that extracts:
    run as a provider or a delegate (§7, §15), its evidence is upstream of `key`'s node (§9)."""
    for agent in result.studio.agents:
        if key not in agent.skills:
            continue
        for other in agent.skills:
            contract, profile = result.contracts.get(other), profiles.get(other)
            if other == key or contract is None or profile is None:
                continue
            if any(t.extracts for name, t in contract.tools.items() if name in profile.tool_names):
                return True
    return False


def _dead_writes(profile: ir.SkillProfile, contract: ir.Contract, extracting_elsewhere: bool) -> list[str]:
    """Writes of this skill that no call can ever pass: a required, unbound argument whose sources
    cannot match anything, or only EVIDENCE while no tool this skill may call extracts a value and no
    other skill of its agents could supply evidence (as a provider or a delegate)."""
    callable_tools = {name: t for name, t in contract.tools.items() if name in profile.tool_names}
    extracting = extracting_elsewhere or any(t.extracts for t in callable_tools.values())
    out = []
    for name, tool in callable_tools.items():
        if tool.side_effect != "WRITE":
            continue
        for param, arg in tool.args.items():
            if not arg.required or arg.has_const or arg.from_ is not None:
                continue
            matchable = set(arg.sources) & _MATCHABLE
            if not matchable:
                why = f"its argument '{param}' has no source a value can match"
            elif matchable == {"EVIDENCE"} and not extracting:
                lookup = arg.missing.tool if arg.missing.action == "CALL_TOOL" and arg.missing.tool else None
                hint = f" ('{lookup}' is not in the skill's tools:)" if lookup and lookup not in callable_tools else ""
                why = (f"its argument '{param}' must come from EVIDENCE, and no tool the skill (or another skill of "
                       f"its agent) may call extracts any{hint}")
            else:
                continue
            out.append(f"skill '{profile.skill_key}': the write '{name}' can never run: {why}, so at run time every "
                       "call of it is refused (PARAM_PROVENANCE_REJECTED) and the node never finishes")
    return out
