"""The front end over a whole studio: parse and validate every ACTIVE skill (§16).

A skill with any error is rejected and the others still load. Never raises on bad contract text:
an unexpected failure inside the front end becomes an SC900 diagnostic for that skill.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from skillc.compiler import ir
from skillc.compiler.diagnostics import Diagnostic, make
from skillc.compiler.evidence_fields import check_evidence_fields
from skillc.compiler.success_patterns import check_success_patterns
from skillc.compiler.parse import parse_contract
from skillc.compiler.studio_border import CODE as BORDER_CODE
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


def refusal_diagnostic(r: ir.Refusal) -> Diagnostic:
    """SC506 for a studio record the border refused (compiler.studio_border), SC507 for a record
    file that is not a YAML mapping, at its position."""
    span = ir.Span(line=r.line, column=r.column, end_line=r.line, end_column=r.end_column)
    d = make(r.code or BORDER_CODE, "error", r.message, text=None, span=span, skill=r.key if r.kind == "skill" else None, file=r.file)
    return d.model_copy(update={"excerpt": r.excerpt})


def check_skill(profile: ir.SkillProfile) -> tuple[ir.Contract | None, list[Diagnostic]]:
    """Parse and validate one skill's contract; the contract is None if it must not load."""
    if profile.source is not None and profile.source.refusal is not None:
        return None, [refusal_diagnostic(profile.source.refusal)]  # its text is a cleaned copy: not read
    file = profile.source.contract_file if profile.source else None
    try:
        contract, diags = parse_contract(profile.skill_contract, skill=profile.skill_key, file=file)
        if contract is not None:
            diags += validate(contract, profile, file=file)
            if any(t.rules for t in contract.tools.values()):
                from skillc.compiler.rules_front import check_rules  # lark's rule grammar only when used

                diags += check_rules(contract, profile, file=file)
            if any(a.evidence for tool in contract.tools.values() for a in tool.args.values()):
                diags += check_evidence_fields(contract, profile, file=file)
            if any(t.success is not None and t.success.op == "MATCHES" for t in contract.tools.values()):
                diags += check_success_patterns(contract, profile, file=file)
        diags += _skill_yaml(profile)
    except Exception as exc:  # noqa: BLE001 - a front-end bug must not take the studio down
        return None, [make("SC900", "error", f"internal error while checking this skill: {type(exc).__name__}: {exc}",
                           text=None, span=None, skill=profile.skill_key, file=file)]
    diags.sort(key=lambda d: (d.file != file, d.line, d.column))  # the contract's own findings first
    if contract is None or any(d.severity == "error" for d in diags):
        return None, diags
    return contract, diags


def _skill_yaml(profile: ir.SkillProfile) -> list[Diagnostic]:
    """The skill.yaml schema checks (compiler.authoring) of a skill read from a directory; an
    error there (a value of the wrong type) drops the skill like a contract error."""
    from pathlib import Path

    origin = Path(profile.source.origin) if profile.source else None
    if origin is None or origin.name != "skill.yaml" or not origin.is_file():
        return []
    from skillc.compiler.authoring import lint_skill

    return lint_skill(origin.parent)


class _At(TypedDict):
    """Where a diagnostic points in an agent file (both None when the agent has no YAML file)."""

    text: str | None
    span: ir.Span | None


def agent_diagnostics(agent: ir.AgentProfile, known: set[str] | frozenset[str],
                      loadable: set[str] | frozenset[str]) -> list[Diagnostic]:
    """SC301 for bindings to unknown skill keys (with the nearest known key, or the skill folder
    that lacks skill.yaml), SC302 when none of the agent's skills loads; both point at the agent
    file's `skills:` entries when the agent comes from a YAML file."""
    from pathlib import Path

    from skillc.compiler.authoring import did_you_mean, yaml_span

    where = agent.source.origin if agent.source else f"agent {agent.agent_code}"
    is_file = where.endswith((".yaml", ".yml")) and Path(where).is_file()

    def at(place: tuple[str | int, ...]) -> _At:
        found = yaml_span(where, place) if is_file else None
        return {"text": found[0], "span": found[1]} if found else {"text": None, "span": None}

    out: list[Diagnostic] = []
    for i, key in enumerate(agent.skills):
        if key in known:
            continue
        folder = Path(where).parent.parent / "skills" / key if is_file else None
        if folder is not None and folder.is_dir() and not (folder / "skill.yaml").is_file():
            message = f"agent '{agent.agent_code}' is bound to skills/{key}/, which has no skill.yaml: no such skill"
            help: str | None = f"create {folder / 'skill.yaml'} (skill_name, semantic_desc, status: ACTIVE, tools: [...])"
        else:
            message, help = f"agent '{agent.agent_code}' is bound to unknown skill '{key}'", did_you_mean(key, known)
        out.append(make("SC301", "warning", message, skill=None, file=where, help=help, **at(("skills", i))))
    if not any(k in loadable for k in agent.skills):
        out.append(make("SC302", "warning", f"agent '{agent.agent_code}' has no loadable skill: planning fails for it (§16)",
                        skill=None, file=where, **at(("skills",))))
    return out


def _authoring(studio: ir.Studio) -> list[Diagnostic]:
    """The YAML schema checks of a directory studio (compiler.authoring); none for other sources."""
    from pathlib import Path

    if not studio.origin or not Path(studio.origin).is_dir():
        return []
    from skillc.compiler.authoring import lint_directory

    return lint_directory(studio.origin)


def check_studio(studio: ir.Studio) -> FrontendResult:
    """Parse + validate every ACTIVE skill; warn about agents bound to unknown skills (SC301) and
    agents left with no loadable skill (SC302: planning fails for them, §16)."""
    result = FrontendResult(studio=studio)
    checked = {p.skill_key for p in studio.skills if p.status == "ACTIVE"}  # check_skill covers their skill.yaml
    result.diagnostics += [d for d in _authoring(studio) if d.skill is None or d.skill not in checked]
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
    result.diagnostics += [refusal_diagnostic(r) for r in studio.refused]  # agents left out at the border
    return result
