"""The studio (and a session's evidence) as the console shows it: agents, skills, each contract's per-argument table and each
agent's task-graph template, as JSON data built from the loaded compiled studio.

Everything here reads what `skillc compile` wrote (validator modules, node-link graph
templates and manifest.json, whose hashes and compiler version the modules no longer repeat)
through the loader's objects; the runtime half never imports the compiler, so the
per-argument table says what `skillc explain` says in words from the compiled metadata instead
(`ToolMeta`/`ArgMeta`, and the module's `ParamIssue` constants for what a missing or unprovable
argument does, §5.3 step 4, §5.5).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from skillc.runtime.compiled import skillmeta as rt

# What each §5.3 source means, in the words `skillc explain` uses.
SOURCE_WORDS: dict[str, str] = {
    "USER": "the user said it",
    "EVIDENCE": "equal to a value extracted from successful evidence",
    "NODE_OUTPUT": "found in the node's inputs/outputs",
    "SHARED": "found in task-shared values",
    "SESSION": "found in session-shared values",
    "PRIOR_TASK": "the id of an entity from earlier tasks",
    "MODEL": "whatever the model wrote",
}

# What the runtime does for each §5.5 action, with the error the model is given.
ACTION_WORDS: dict[str, str] = {
    "ASK_USER": "the call is refused and the model must ask the user (PARAM_PROVENANCE_ASK_USER)",
    "CALL_TOOL": "the call is refused until {tool} is called (PARAM_PROVENANCE_CALL_TOOL)",
    "FAIL": "the call is refused and the node should fail (PARAM_PROVENANCE_FAIL)",
    "REJECT": "the value is rejected (PARAM_PROVENANCE_REJECTED)",
}


def _issues(module: ModuleType, tool: rt.ToolMeta) -> list[rt.ParamIssue]:
    """The ParamIssue constants `tool`'s compiled check refers to (the names its code loads), so
    two tools of one skill with an argument of the same name keep their own actions."""
    names = getattr(getattr(tool.check, "__code__", None), "co_names", ())
    found = [getattr(module, n) for n in names if isinstance(getattr(module, n, None), rt.ParamIssue)]
    return found


def _action_text(issue: rt.ParamIssue | None) -> str | None:
    if issue is None:
        return None
    text = ACTION_WORDS.get(issue.action, issue.action).format(tool=repr(issue.tool))
    return text + (f"; message {issue.message!r}" if issue.message else "")


def _parts_text(parts: tuple[Any, ...]) -> str:
    """A compact path tuple back as the contract's dotted path (`[]` for each item)."""
    out = ""
    for part in parts:
        if part[0] == "k":
            out += ("." if out else "") + str(part[1])
        elif part[0] == "i":
            out += f".{part[1]}"
        else:
            out += "[]"
    return out


def _binding(arg: rt.ArgMeta) -> str:
    if arg.platform:
        return "from the caller's platform identity (hidden from approvals, §11)"
    if arg.bound:
        return "bound by the contract (from/const), overwriting the model's value"
    return "not bound: the model fills it"


def _legal(arg: rt.ArgMeta) -> str:
    if arg.bound and not arg.sources:
        return "the bound value only"
    if not arg.sources:
        return "none: any value the model writes is rejected (PARAM_PROVENANCE_REJECTED)"
    return "; ".join(f"{s}: {SOURCE_WORDS.get(s, s)}" for s in arg.sources)


def arg_rows(module: ModuleType, tool: rt.ToolMeta) -> list[dict[str, Any]]:
    """One row per configured argument of `tool`: how it is bound, its legal sources, what a
    missing or unprovable value does (the columns of `skillc explain`)."""
    by_param: dict[tuple[str, str], rt.ParamIssue] = {}
    for issue in _issues(module, tool):
        by_param.setdefault((issue.param, issue.reason), issue)
    rows = []
    for name, arg in tool.args.items():
        # older modules state `required`; newer ones leave it to the check: a required argument
        # is exactly one whose absence the check reports (a "missing" issue)
        required = getattr(arg, "required", None)
        if required is None:
            required = (name, "missing") in by_param
        missing = by_param.get((name, "missing")) if required else None
        rows.append({
            "param": name,
            "path": arg.path,
            "label": arg.label,
            "sensitive": arg.sensitive,
            "required": required,
            "platform": arg.platform,
            "bound": _binding(arg),
            "sources": list(arg.sources),
            "legal": _legal(arg),
            "when_missing": _action_text(missing) if required else "not required: the call goes ahead without it",
            "when_unproven": _action_text(by_param.get((name, "provenance"))),
        })
    return rows


def _has_success(tool: rt.ToolMeta) -> bool:
    """Whether the contract judges business success (§6.1): a flag in older modules, else a
    judge other than the support module's no-judgement default."""
    flag = getattr(tool, "has_success", None)
    if isinstance(flag, bool):
        return flag
    return getattr(tool, "judge", None) is not getattr(rt, "judge_nothing", None)


def _from_prefix(spec: Any) -> str | None:
    """An input's source as far as the compiled metadata tells it (prefix and shared key)."""
    prefix = getattr(spec, "prefix", None)
    if prefix is None:
        return None
    key = getattr(spec, "share_key", None)
    return f"{prefix}.{_parts_text(tuple(tuple(p) for p in key))}" if key else f"a {prefix}.* expression"


def extract_keys(tool: rt.ToolMeta) -> list[str]:
    """The §6.3 extract keys of `tool`, from its compiled `extract` itself: the generated function
    sets every configured key whatever the response holds (an absent path gives MISSING), so
    running it on an empty response names them without the module repeating them as data."""
    if tool.extract is rt.extract_default:
        return []
    try:
        return [str(k) for k in tool.extract({}, {}).values]
    except Exception:  # a hand-written or future extract that needs a real response: say nothing
        return []


def tool_view(module: ModuleType, tool: rt.ToolMeta) -> dict[str, Any]:
    """One contract tool: its flags, idempotency key, verify tool, extracts and argument table."""
    return {
        "name": tool.name,
        "label": tool.label,
        "side_effect": tool.side_effect,
        "confirm": tool.confirm,
        "in_tool_names": tool.name in module.SKILL.tool_names,
        "idempotency_key": [_parts_text(p) for p in tool.idempotency_key],
        "verify_tool": tool.verify_tool,
        "has_success": _has_success(tool),
        "extracts": extract_keys(tool),
        "extracts_configured": tool.extract is not rt.extract_default,
        "args": arg_rows(module, tool),
    }


def skill_summary(module: ModuleType) -> dict[str, Any]:
    """A skill's profile (the studio list's row)."""
    meta = module.SKILL
    return {
        "key": meta.key,
        "name": meta.name,
        "mode": meta.mode,
        "delegatable": meta.delegatable,
        "target": meta.target,
        "semantic_desc": meta.semantic_desc,
        "tool_names": list(meta.tool_names),
        "read_only": not any(t.side_effect == "WRITE" for t in module.TOOLS.values()),
        # the progress label of each contract tool (what a chat shows while it runs)
        "tool_labels": {n: t.label for n, t in sorted(module.TOOLS.items()) if t.label},
    }


def manifest_of(studio: Any) -> Mapping[str, Any]:
    """The compiled directory's manifest.json as loaded: a `CompiledStudio`'s own, or the one
    behind serve's `StudioFeed` (`.compiled`); empty for a studio that has none."""
    for holder in (studio, getattr(studio, "compiled", None)):
        manifest = getattr(holder, "manifest", None)
        if isinstance(manifest, Mapping):
            return manifest
    return {}


def skill_view(module: ModuleType, manifest: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A skill in full: profile, manual, contract tools with their argument tables, inputs,
    outputs, and (from the compiled directory's `manifest`) the hashes it was built from."""
    meta = module.SKILL
    out = skill_summary(module)
    entry = ((manifest or {}).get("skills") or {}).get(meta.key) or {}
    out.update(
        manual=meta.manual,
        # provenance of the compiled module: the manifest records it (docs/codegen.md)
        contract_sha256=entry.get("contract_sha256"),
        module_sha256=entry.get("module_sha256"),
        compiler_version=(manifest or {}).get("compiler_version"),
        tools=[tool_view(module, module.TOOLS[n]) for n in sorted(module.TOOLS)],
        inputs=[{"name": i.name, "required": i.required, "provider": i.provider, "from": _from_prefix(i)}
                for i in module.INPUTS.values()],
        outputs=[{"name": o.name, "type": o.type, "required": o.required, "share": o.share,
                  "sensitive_fields": list(o.fields), "entity": o.entity.type if o.entity else None}
                 for o in module.OUTPUTS.values()],
    )
    return out


def agent_summary(template: Any, studio: Any) -> dict[str, Any]:
    """An agent's profile and its loadable skills."""
    return {
        "agent_code": template.agent_code,
        "agent_name": template.agent_name,
        "identity_desc": template.identity_desc,
        "mission_desc": template.mission_desc,
        "boundary_desc": template.boundary_desc,
        "style_desc": template.style_desc,
        "principle_desc": template.principle_desc,
        "skills": [k for k in template.skills if k in studio.skills],
        "delegation_catalog": list(template.delegation_catalog),
    }


def agent_graph(template: Any) -> dict[str, Any]:
    """The agent's task-graph template: nodes (skills) and provider → consumer edges (§7, §10)."""
    g = template.graph
    nodes = []
    for key in sorted(g.nodes):
        attrs = g.nodes[key]
        nodes.append({
            "id": key,
            "skill_name": attrs.get("skill_name", key),
            "mode": attrs.get("mode"),
            "target": attrs.get("target"),
            "delegatable": key in template.delegation_catalog,
            "read_only": attrs.get("read_only", False),
            "unavailable_inputs": list(attrs.get("unavailable_inputs", [])),
        })
    edges = [{"source": u, "target": v, "inputs": [link["input"] for link in g.edges[u, v].get("inputs", [])]}
             for u, v in sorted(g.edges)]
    return {"agent_code": template.agent_code, "nodes": nodes, "edges": edges}


def studio_index(studio: Any) -> dict[str, Any]:
    """The whole studio in one listing: agents, loadable skills, rejected skills with reasons."""
    return {
        "agents": [agent_summary(studio.agents[c], studio) for c in sorted(studio.agents)],
        "skills": [skill_summary(studio.skills[k]) for k in sorted(studio.skills)],
        "rejected": [{"key": k, "diagnostics": list(d)} for k, d in sorted(getattr(studio, "rejected", {}).items())],
    }


def evidence_view(ev: Any) -> dict[str, Any]:
    """One evidence record as the console shows it: status and what the contract extracted. Its
    arguments are left out (the trace has them, masked); values and entities come from the
    response, which the trace's observation already shows."""
    return {
        "id": ev.id, "task": ev.task, "node": ev.node, "tool": ev.tool, "side_effect": ev.side_effect,
        "status": ev.status, "business_ok": ev.business_ok, "empty": ev.empty, "turn": ev.turn,
        "values": _jsonable(getattr(ev, "values", {}) or {}),
        "entities": _jsonable(getattr(ev, "entities", []) or []),
    }


def _jsonable(value: Any) -> Any:
    """Plain JSON data (a response may hold Decimals or other non-JSON scalars)."""
    return json.loads(json.dumps(value, default=str))
