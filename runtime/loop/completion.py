"""Completion (§10): a node's target and the five finish checks, in order."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skillc.runtime.seam.state import NodeState
from skillc.runtime.words.errors import ErrorName
from skillc.runtime.words.vocab import OPEN_STATUSES, PLATFORM_FIELDS, SideEffect, Source
from skillc.runtime.seam.indexes import evidence_index
from skillc.runtime.seam.seams import active_task

if TYPE_CHECKING:
    from skillc.runtime.seam.seams import SessionEnv


def write_tools(module: Any) -> set[str]:
    """The skill's write tools: sideEffect WRITE in contract.tools and in toolNames (§10.1)."""
    names = set(module.SKILL.tool_names)
    return {t for t, m in module.TOOLS.items() if m.side_effect == SideEffect.WRITE and t in names}


def resolve_target(module: Any, planned: str | None) -> str | None:
    """§10.1 rules 1 and 2: the plan's target if it is a write tool, else the contract's, else None."""
    writes = write_tools(module)
    if planned and planned in writes:
        return planned
    target = module.SKILL.target
    return target if target in writes else None


def output_source_ok(spec: Any, source: str) -> bool:
    """An output's source is legal (§8): never MODEL; within `sources` when configured."""
    if source == Source.MODEL:
        return False
    return not spec.sources or source in spec.sources


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def finish_check(env: SessionEnv, node: NodeState, output: Any) -> tuple[str, str] | None:
    """The first failing check of §10.2 as (error name, hint), or None when the node may finish."""
    if _empty(output) or (isinstance(output, str) and not output.strip()):
        return ErrorName.FINISH_MISSING_OUTPUT, "call builtin_node_finish with a non-empty output describing the result"
    index = evidence_index(env)  # lookups, not scans of every record the node holds
    open_writes = [e for e in index.open_of(node.task, node.id) if e.status in OPEN_STATUSES]
    if open_writes:
        return ErrorName.FINISH_OPEN_EVIDENCE, f"write {open_writes[0].id} is not settled yet; wait for its verification"
    module = env.skill_module(node.skill)
    for name, spec in module.OUTPUTS.items():
        if not spec.required or name in PLATFORM_FIELDS:
            # a platform-named output can never be written, so it never blocks ("What drops a skill",
            # docs/interpretations.md)
            continue
        got = node.outputs.get(name)
        if got is None or _empty(got["value"]):
            return ErrorName.FINISH_OUTPUT_MISSING, f"write the required output {name} with builtin_output_set first"
        if not output_source_ok(spec, got["source"]):
            return ErrorName.FINISH_OUTPUT_SOURCE, f"output {name} has a source that is not allowed; set it again from an allowed source"
    if node.target:
        if not target_done(env, node):
            return ErrorName.FINISH_NEED_TARGET, f"the goal is the write {node.target}; it has not completed yet"
    elif not module.OUTPUTS and module.SKILL.tool_names:
        if not index.completed_in(node.task, node.id):
            return ErrorName.FINISH_NEED_BUSINESS, "call a business tool before finishing"
    return None


def target_done(env: SessionEnv, node: NodeState) -> bool:
    """The target tool completed in this node or one of its delegated prerequisite nodes, or one
    of them replayed it (an idempotent replay of a completed write; docs/interpretations.md: A
    replayed target completes the node)."""
    task_nodes = active_task(env).nodes
    nodes = [node] + [task_nodes[d["node"]] for d in node.delegations if d["node"] in task_nodes]
    index = evidence_index(env)
    if any(index.completed_in(n.task, n.id, node.target) for n in nodes):
        return True
    replays = (env.evidence.get(eid) for n in nodes for eid in n.replayed)
    return any(ev is not None and ev.tool == node.target and ev.completed for ev in replays)
