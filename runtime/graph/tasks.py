"""Executing a task graph (§7, §8, §15): nodes run in dependency order, delegates are inserted
before their delegator, a DONE node shares its outputs, and the task ends with a reply.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillc.runtime.words.events import EventName
from skillc.runtime.call import lifecycle
from skillc.runtime.compiled.skillmeta import make_entities
from skillc.runtime.compiled.values import MISSING, has_value
from skillc.runtime.loop.completion import resolve_target
from skillc.runtime.call.context import NodeContext
from skillc.runtime.call.evidence import index_entities
from skillc.runtime.call.lifecycle import FINAL, finish_node, question_of
from skillc.runtime.loop.node import run_node
from skillc.runtime.graph.planner import PlannedNode
from skillc.runtime.loop.prompting import step_messages
from skillc.runtime.seam.state import NodeState, TaskState
from skillc.runtime.words.vocab import FINAL_TASK, NodeKind, NodeStatus, Share, TaskStatus
from skillc.runtime.seam.seams import active_task

if TYPE_CHECKING:
    from skillc.runtime.seam.seams import SessionEnv
    from skillc.runtime.words.event_types import PlanVia


@dataclass
class Reply:
    """What a turn says back: the text, and whether the session waits on a question."""

    text: str
    suspended: bool = False
    kind: str | None = None
    task: str | None = None


def add_planned(env: SessionEnv, nodes: list[PlannedNode], how: PlanVia) -> None:
    """Make the planned nodes the active task's graph; emits task.planned."""
    task = active_task(env)
    for p in nodes:
        # §1.2: a provider node is titled by its skill's semantic_desc (skill_name when empty)
        meta = env.skill_module(p.skill).SKILL
        title = (meta.semantic_desc or meta.name) if p.kind == NodeKind.PROVIDER else ""
        task.nodes[p.node] = NodeState(id=p.node, task=task.id, skill=p.skill, kind=p.kind, deps=list(p.deps),
                                       target=p.target, objective=title)
        task.order.append(p.node)
    env.emit({"type": EventName.TASK_PLANNED, "via": how,
              "nodes": [{"node": p.node, "skill": p.skill, "target": p.target, "deps": list(p.deps), "kind": p.kind}
                        for p in nodes]})


def suspended_node(task: TaskState | None) -> NodeState | None:
    """The node of an unfinished task that waits on the user, if any."""
    if task is None or task.state in FINAL_TASK:
        return None
    for nid in task.order:
        n = task.nodes[nid]
        if n.state == lifecycle.SUSPENDED:
            return n
    return None


def running_node(task: TaskState) -> NodeState | None:
    """The task's RUNNING node (one a user message may continue), if any."""
    return next((task.nodes[n] for n in task.order if task.nodes[n].state == lifecycle.RUNNING), None)


def _next_node(task: TaskState) -> NodeState | None:
    for nid in task.order:
        n = task.nodes[nid]
        if n.state in FINAL:
            continue
        if all(task.nodes[d].state in FINAL for d in n.deps if d in task.nodes):
            return n
    return None


async def execute(env: SessionEnv) -> Reply:
    """Run the active task's nodes until it ends or a node suspends."""
    task = active_task(env)
    task.state = TaskStatus.RUNNING
    while True:
        node = _next_node(task)
        if node is None:
            break
        if node.state == lifecycle.PENDING:
            if not start_node(env, node):
                continue
            # durable as RUNNING with its opening messages before its first model step, so a
            # process that dies during that step (a read has no pre-registration) reopens this
            # node at the next turn (docs/interpretations.md: Restart) instead of starting a new task
            await env.save()
        outcome = await run_node(env, node)
        if outcome == lifecycle.SUSPENDED:
            task.state = TaskStatus.SUSPENDED
            return Reply(question_of(env, node), True, node.suspended, task.id)  # the turn saves
        await env.save()
        if node.kind == NodeKind.DELEGATE and node.state in FINAL and node.parent:
            parent = task.nodes[node.parent]
            text = node.output_text if node.state == lifecycle.DONE else node.reason
            parent.messages.append({"role": "user", "content": f"[delegate {node.id} {node.skill}] ended "
                                    f"{node.state}: {text}"})
    return finish_task(env)


def start_node(env: SessionEnv, node: NodeState) -> bool:
    """Start a PENDING node: fail it when a dependency failed, skip a satisfied provider."""
    task = active_task(env)
    for d in node.deps:
        dep = task.nodes[d]
        if dep.kind != NodeKind.DELEGATE and dep.state in (NodeStatus.FAILED, NodeStatus.CANCELLED):
            finish_node(env, node, NodeStatus.FAILED, reason=f"dependency {d} ended {dep.state}")
            return False
    module = env.skill_module(node.skill)
    if node.kind == NodeKind.PROVIDER:
        shared = [o for o in module.OUTPUTS.values() if o.share]
        pools: dict[str | None, dict[str, Any]] = {Share.TASK: task.shared, Share.SESSION: env.session.values}
        if shared and all(has_value(pools[o.share].get(o.name, MISSING)) for o in shared):
            lifecycle.skip(env, node, "all its shared outputs exist")
            return False
    node.input_sources = module.bind_inputs(node.inputs, NodeContext(env, node)) or {}
    lifecycle.start(env, node, step_messages(env, node))
    return True


def finish_task(env: SessionEnv) -> Reply:
    """End the task: FAILED when a planned node failed, else DONE with the sinks' outputs."""
    task = active_task(env)
    failed = [task.nodes[n] for n in task.order
              if task.nodes[n].kind != NodeKind.DELEGATE and task.nodes[n].state in (NodeStatus.FAILED, NodeStatus.CANCELLED)]
    if failed:
        task.state, task.reason = TaskStatus.FAILED, failed[0].reason
        env.emit({"type": EventName.TASK_FINISHED, "state": TaskStatus.FAILED, "reason": task.reason})
        return Reply("Could not complete: " + "; ".join(f"{n.id}: {n.reason}" for n in failed), False, task=task.id)
    task.state = TaskStatus.DONE
    env.emit({"type": EventName.TASK_FINISHED, "state": TaskStatus.DONE})
    needed = {d for n in task.nodes.values() for d in n.deps}
    sinks = [task.nodes[n] for n in task.order if n not in needed and task.nodes[n].state == NodeStatus.DONE]
    return Reply("\n".join(n.output_text or "" for n in sinks) or "Done.", False, task=task.id)


def cancel_task(env: SessionEnv, reason: str) -> Reply:
    """Cancel every unfinished node and the task."""
    task = active_task(env)
    for nid in task.order:
        n = task.nodes[nid]
        if n.state not in FINAL:
            finish_node(env, n, NodeStatus.CANCELLED, reason=reason)
    task.state, task.reason = TaskStatus.CANCELLED, reason
    env.emit({"type": EventName.TASK_FINISHED, "state": TaskStatus.CANCELLED, "reason": reason})
    return Reply(f"Cancelled: {reason}", False, task=task.id)


def add_delegate(env: SessionEnv, parent: NodeState, skill: str, objective: str) -> NodeState:
    """A delegate node for `skill`, run before `parent` (§15); ids d1, d2, … unused so far."""
    task = active_task(env)
    count = task.counters.get("delegate", 0) + 1
    while f"d{count}" in task.nodes:  # a planned node may already be called d1
        count += 1
    task.counters["delegate"] = count
    child = NodeState(id=f"d{count}", task=task.id, skill=skill, kind=NodeKind.DELEGATE, depth=parent.depth + 1,
                      parent=parent.id, objective=objective or f"Prerequisite for {parent.skill}",
                      target=resolve_target(env.skill_module(skill), None))
    task.nodes[child.id] = child
    task.order.insert(task.order.index(parent.id), child.id)
    parent.deps.append(child.id)
    parent.delegations.append({"node": child.id, "skill": skill, "objective": objective})
    return child


def share_outputs(env: SessionEnv, node: NodeState) -> None:
    """§8 at DONE: share outputs to shared.* / session.*, entities from outputs."""
    task = active_task(env)
    module = env.skill_module(node.skill)
    for key, got in node.outputs.items():
        spec = module.OUTPUTS.get(key)
        if spec is None:
            continue
        if spec.share == Share.TASK:
            task.shared[key] = got["value"]
        elif spec.share == Share.SESSION:
            env.session.values[key] = got["value"]
        if spec.entity is not None:
            index_entities(env, (dict(ent, task=task.id, node=node.id)
                                 for ent in make_entities(got["value"], spec.entity)))
