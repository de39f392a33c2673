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
    for profile in sorted(result.studio.skills, key=lambda p: p.skill_key):
        contract = result.contracts.get(profile.skill_key)
        if contract is not None:
            out += _dead_writes(profile, contract)
    return out


def _dead_writes(profile: ir.SkillProfile, contract: ir.Contract) -> list[str]:
    """Writes of this skill that no call can ever pass: a required, unbound argument whose sources
    cannot match anything, or only EVIDENCE while none of the skill's callable tools extracts a value."""
    callable_tools = {name: t for name, t in contract.tools.items() if name in profile.tool_names}
    extracting = sorted(name for name, t in callable_tools.items() if t.extracts)
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
                why = f"its argument '{param}' must come from EVIDENCE, and no tool the skill may call extracts any{hint}"
            else:
                continue
            out.append(f"skill '{profile.skill_key}': the write '{name}' can never run: {why}, so at run time every "
                       "call of it is refused (PARAM_PROVENANCE_REJECTED) and the node never finishes")
    return out
