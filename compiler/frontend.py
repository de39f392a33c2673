"""The front end over a whole studio: parse and validate every ACTIVE skill (§16).

A skill with any error is rejected and the others still load. Never raises on bad contract text:
an unexpected failure inside the front end becomes an SC900 diagnostic for that skill.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from skillc.compiler import ir
from skillc.compiler.diagnostics import Diagnostic, make
from skillc.compiler.parse import parse_contract
from skillc.compiler.validate import validate


@dataclass
class FrontendResult:
    """What the front end made of a studio.

    studio: the studio as loaded; contracts: skill_key -> IR of every loadable skill;
    rejected: skill_key -> the errors that drop it; diagnostics: everything, sorted by place.
    """

    studio: ir.Studio
    contracts: dict[str, ir.Contract] = field(default_factory=dict)
    rejected: dict[str, list[Diagnostic]] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def check_skill(profile: ir.SkillProfile) -> tuple[ir.Contract | None, list[Diagnostic]]:
    """Parse and validate one skill's contract; the contract is None if it must not load."""
    file = profile.source.contract_file if profile.source else None
    try:
        contract, diags = parse_contract(profile.skill_contract, skill=profile.skill_key, file=file)
        if contract is not None:
            diags += validate(contract, profile, file=file)
    except Exception as exc:  # noqa: BLE001 - a front-end bug must not take the studio down
        return None, [make("SC900", "error", f"internal error while checking this skill: {type(exc).__name__}: {exc}",
                           text=None, span=None, skill=profile.skill_key, file=file)]
    diags.sort(key=lambda d: (d.line, d.column))
    if contract is None or any(d.severity == "error" for d in diags):
        return None, diags
    return contract, diags


def agent_diagnostics(agent: ir.AgentProfile, known: set[str] | frozenset[str],
                      loadable: set[str] | frozenset[str]) -> list[Diagnostic]:
    """SC301 for bindings to unknown skill keys, SC302 when none of the agent's skills loads."""
    where = agent.source.origin if agent.source else f"agent {agent.agent_code}"
    out = [make("SC301", "warning", f"agent '{agent.agent_code}' is bound to unknown skill '{key}'",
                text=None, span=None, skill=None, file=where) for key in agent.skills if key not in known]
    if not any(k in loadable for k in agent.skills):
        out.append(make("SC302", "warning", f"agent '{agent.agent_code}' has no loadable skill: planning fails for it (§16)",
                        text=None, span=None, skill=None, file=where))
    return out


def check_studio(studio: ir.Studio) -> FrontendResult:
    """Parse + validate every ACTIVE skill; warn about agents bound to unknown skills (SC301) and
    agents left with no loadable skill (SC302: planning fails for them, §16)."""
    result = FrontendResult(studio=studio)
    known: set[str] = set()
    for profile in studio.skills:
        if profile.status != "ACTIVE":
            continue
        known.add(profile.skill_key)
        contract, diags = check_skill(profile)
        result.diagnostics += diags
        if contract is None:
            result.rejected[profile.skill_key] = [d for d in diags if d.severity == "error"]
        else:
            result.contracts[profile.skill_key] = contract
    for agent in studio.agents:
        if agent.status == "ACTIVE":
            result.diagnostics += agent_diagnostics(agent, known, set(result.contracts))
    return result
