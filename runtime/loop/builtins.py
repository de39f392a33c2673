"""The builtin tools of §12: always available, outside the parameter contract and the gate.

Each handler takes (env, node, args) and returns a CallResult; `effect` tells the node loop to
suspend, finish, fail or run a delegate. Which builtins are offered to the model depends on the
node (approval only while a call is gated, delegate only when something is delegable, …).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from skillc.runtime.words.events import EventName
from skillc.runtime.loop import envtools
from skillc.runtime.call import lifecycle
from skillc.runtime.compiled.paths import get_path, parse_path
from skillc.runtime.compiled.values import MISSING, canonical
from skillc.runtime.call.chain import CallResult, reject
from skillc.runtime.loop.completion import finish_check, output_source_ok
from skillc.runtime.call.context import NodeContext
from skillc.runtime.model.base import ToolSpec
from skillc.runtime.seam.state import FollowUp, NodeState
from skillc.runtime.words.errors import ErrorName
from skillc.runtime.words.vocab import PLATFORM_FIELDS, Effect, NodeStatus, SideEffect, Source, Suspension
from skillc.runtime.seam.seams import active_task

if TYPE_CHECKING:
    from skillc.runtime.seam.seams import SessionEnv



# A delegation that ended so may not be made again for the same objective (DELEGATE_REPEATED).
_ENDED_UNDONE = (NodeStatus.FAILED, NodeStatus.CANCELLED, NodeStatus.SKIPPED)


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


S: dict[str, Any] = {"type": "string"}
A: dict[str, Any] = {}
SPECS: dict[str, ToolSpec] = {t.name: t for t in (
    ToolSpec("builtin_node_follow_up", "Ask the user a question and wait for the answer. expectedFields: the "
             "argument names the answer will supply.", _obj({"question": S, "expectedFields": {"type": "array", "items": S},
                                                              "suggestions": {"type": "array", "items": S}}, ["question"])),
    ToolSpec("builtin_node_approval", "Ask the user to confirm the write call the gate stopped.",
             _obj({"summary": S, "toolName": S}, ["summary", "toolName"])),
    ToolSpec("builtin_node_finish", "Declare the node's goal achieved, with its result.", _obj({"output": S}, ["output"])),
    ToolSpec("builtin_node_fail", "Declare that the node cannot reach its goal, with the reason.", _obj({"reason": S}, ["reason"])),
    ToolSpec("builtin_node_delegate", "Run a read-only skill first as a prerequisite node; its evidence becomes yours.",
             _obj({"skillKey": S, "objective": S}, ["skillKey"])),
    ToolSpec("builtin_output_set", "Write one declared output. sourceType must not be MODEL; for EVIDENCE give "
             "sourceRef (evidence id) and sourcePath (path in its response).",
             _obj({"key": S, "value": A, "sourceType": S, "sourceRef": S, "sourcePath": S}, ["key", "value", "sourceType"])),
    ToolSpec("builtin_state_set", "Write a private scratch-pad value of this node.", _obj({"key": S, "value": A}, ["key", "value"])),
    ToolSpec("builtin_evidence_get", "Read the raw response of an evidence id.", _obj({"evidenceId": S}, ["evidenceId"])),
    ToolSpec("builtin_session_info", "The session id, node id and node state.", _obj({}, [])),
    *envtools.SPECS,
)}


def offered(env: SessionEnv, node: NodeState) -> list[str]:
    """The builtins offered to the model for this node now."""
    names = ["builtin_node_follow_up"]
    if node.pending is not None and not node.pending.asked:
        names.append("builtin_node_approval")
    names += ["builtin_node_finish", "builtin_node_fail"]
    if delegable(env, node) and node.depth < env.settings.delegate_max_depth:
        names.append("builtin_node_delegate")
    if outputs_used(env, node):
        names.append("builtin_output_set")
    names += ["builtin_state_set", "builtin_evidence_get", "builtin_session_info"]
    names += [s.name for s in envtools.SPECS]
    return names


def delegable(env: SessionEnv, node: NodeState) -> list[str]:
    """Skills this node may delegate to: the agent's delegation catalog, itself excluded."""
    return [k for k in env.agent_delegables() if k != node.skill]


def outputs_used(env: SessionEnv, node: NodeState) -> bool:
    """Someone uses this node's outputs (a dependant, or a required/shared/entity output)."""
    if any(node.id in n.deps for n in active_task(env).nodes.values()):
        return True
    return any(o.required or o.share or o.entity for o in env.skill_module(node.skill).OUTPUTS.values())


# ---------------------------------------------------------------- node builtins


async def follow_up(env: SessionEnv, node: NodeState, args: dict[str, Any]) -> CallResult:
    question = str(args.get("question") or "").strip()
    fields = args.get("expectedFields") or []
    if not question:
        return reject(ErrorName.FOLLOW_UP_UNGROUNDED, "question is empty", "ask a concrete question")
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        return reject(ErrorName.FOLLOW_UP_UNGROUNDED, "expectedFields must be a list of argument names", None)
    done = node.answered
    if done and done.answered_turn == env.session.turn and done.question == question and sorted(done.expected_fields) == sorted(fields):
        return reject(ErrorName.FOLLOW_UP_ANSWERED, "the user just answered this question",
                      "use the answer: call the tool again with the value the user gave")
    module = env.skill_module(node.skill)
    if fields:
        user_ok, evidence_ok = set(), set()
        for meta in module.TOOLS.values():
            for a in meta.args.values():
                if a.expected_user:
                    user_ok.add(a.path)
                if a.expected_evidence:
                    evidence_ok.add(a.path)
        looked_up = any(e and e.completed and not e.empty and e.side_effect == SideEffect.NONE
                        for e in (env.evidence.get(i) for i in node.evidence))
        bad = [f for f in fields if f not in user_ok and not (f in evidence_ok and looked_up)]
        if bad:
            return reject(ErrorName.FOLLOW_UP_UNGROUNDED,
                          f"{', '.join(bad)} cannot be supplied by the user here",
                          "look the value up with a query tool instead, or fail")
    else:
        last = env.evidence.get(node.last_business or "")
        if last is None or not (last.empty or last.business_ok is False):
            return reject(ErrorName.FOLLOW_UP_UNGROUNDED,
                          "a question without expectedFields is allowed only after a query came back empty or failed",
                          "name the arguments you need in expectedFields, or continue with the tools")
    node.follow_up = FollowUp(question=question, expected_fields=list(fields))
    lifecycle.ask(node, Suspension.FOLLOW_UP)
    return CallResult(ok=True, message="the question was sent to the user; wait for the answer", effect=Effect.SUSPEND)


async def approval(env: SessionEnv, node: NodeState, args: dict[str, Any]) -> CallResult:
    tool = str(args.get("toolName") or "")
    pending = node.pending
    if pending is None:
        return reject(ErrorName.APPROVAL_NOT_GATED, "no write call is waiting for confirmation",
                      "call the write tool first; ask for approval only after APPROVAL_REQUIRED")
    if tool != pending.tool:
        return reject(ErrorName.APPROVAL_TOOL_MISMATCH, f"the call waiting for confirmation is {pending.tool}, not {tool}",
                      f"call builtin_node_approval with toolName \"{pending.tool}\"")
    summary = str(args.get("summary") or "").strip()
    pending.question = (summary + "\n" if summary else "") + pending.summary
    pending.asked = True
    pending.asked_at = env.now()
    lifecycle.ask(node, Suspension.APPROVAL)
    return CallResult(ok=True, message="the user was asked to confirm", effect=Effect.SUSPEND)


async def finish(env: SessionEnv, node: NodeState, args: dict[str, Any]) -> CallResult:
    output = args.get("output")
    failed = finish_check(env, node, output)
    if failed:
        return reject(failed[0], failed[1].split(";")[0], failed[1])
    node.output_text = output if isinstance(output, str) else canonical(output)
    return CallResult(ok=True, message="finished", effect=Effect.FINISH)


async def fail(env: SessionEnv, node: NodeState, args: dict[str, Any]) -> CallResult:
    node.reason = str(args.get("reason") or "the node gave up")
    return CallResult(ok=True, message="failed", effect=Effect.FAIL)


async def delegate(env: SessionEnv, node: NodeState, args: dict[str, Any]) -> CallResult:
    key = str(args.get("skillKey") or "")
    objective = str(args.get("objective") or "")
    if key not in env.agent_skills():
        return reject(ErrorName.SKILL_NOT_FOUND, f"no skill {key!r} in this agent", "delegate one of the skills offered")
    if key == node.skill or key not in env.agent_delegables() or node.depth >= env.settings.delegate_max_depth:
        return reject(ErrorName.DELEGATE_FORBIDDEN, f"{key} cannot be delegated from here", "do the work with your own tools")
    for d in node.delegations:
        prior = active_task(env).nodes.get(d["node"])
        if d["skill"] == key and d["objective"] == objective and prior and prior.state in _ENDED_UNDONE:
            return reject(ErrorName.DELEGATE_REPEATED, f"{key} was already delegated for this objective and ended {prior.state}",
                          "handle it yourself, ask the user, or fail")
    child = env.add_delegate(node, key, objective)
    return CallResult(ok=True, message=f"{key} runs first as node {child.id}; you continue when it ends",
                      effect=Effect.DELEGATE, data={"node": child.id})


async def output_set(env: SessionEnv, node: NodeState, args: dict[str, Any]) -> CallResult:
    key = args.get("key")
    value = args.get("value")
    source = str(args.get("sourceType") or "")
    ref = args.get("sourceRef")
    module = env.skill_module(node.skill)
    if not isinstance(key, str) or not key.strip():
        return reject(ErrorName.OUTPUT_PATH_INVALID, "output key is empty", "give the output key")
    if key in PLATFORM_FIELDS:
        return reject(ErrorName.PLATFORM_FIELD_FORBIDDEN, f"{key} is a reserved platform field name", None)
    spec = module.OUTPUTS.get(key)
    if module.OUTPUTS and spec is None:
        return reject(ErrorName.OUTPUT_WRITE_FORBIDDEN, f"{key} is not a declared output",
                      f"declared outputs: {', '.join(module.OUTPUTS)}")
    if not module.OUTPUTS and not outputs_used(env, node):
        return reject(ErrorName.OUTPUT_WRITE_FORBIDDEN, "this node has no outputs", None)
    problem = await _source_problem(env, node, spec, value, source, ref, args.get("sourcePath"))
    if problem:
        return reject(problem[0], problem[1], "set the output from evidence or another allowed source, with the exact value")
    node.outputs[key] = {"value": value, "source": source, "ref": ref}
    env.emit({"type": EventName.OUTPUT_SET, "node": node.id, "key": key, "value": value, "source": Source(source)})
    return CallResult(ok=True, message=f"output {key} set")


_OUTPUT_SOURCES = frozenset(Source) - {Source.MODEL}


async def _source_problem(env: SessionEnv, node: NodeState, spec: Any, value: Any, source: str, ref: Any,
                    path: Any) -> tuple[str, str] | None:
    if source == Source.MODEL:
        return ErrorName.SOURCE_REJECT, "an output cannot come from MODEL"
    if source not in _OUTPUT_SOURCES:
        return ErrorName.SOURCE_REJECT, f"unknown sourceType {source!r}"
    if spec is not None and not output_source_ok(spec, source):
        return ErrorName.SOURCE_REJECT, f"{source} is not an allowed source of {spec.name}"
    ctx = NodeContext(env, node)
    if source == Source.EVIDENCE:
        if not ref:
            return ErrorName.EVIDENCE_PATH_INVALID, "sourceRef (the evidence id) is empty"
        ev = await env.find_evidence(str(ref))
        if ev is None or not ev.completed:  # §9: evidence is a business-successful call (empty counts)
            return ErrorName.SOURCE_REJECT, f"no successful evidence {ref}"
        found = get_path(ev.response, parse_path(str(path or "")))
        if found is MISSING or canonical(found) != canonical(value):
            return ErrorName.SOURCE_REJECT, f"the value at {path!r} of {ref} is not {canonical(value)}"
    elif source == Source.CONTRACT:
        if spec is None or not spec.has_constant or canonical(spec.constant) != canonical(value):
            return ErrorName.SOURCE_REJECT, "the value is not the contract's constant"
    elif source == Source.USER and not ctx.user_mentions(spec.name if spec else "", value):
        return ErrorName.SOURCE_REJECT, "the user did not say this value"
    elif source == Source.PLATFORM and not any(canonical(v) == canonical(value) for v in env.platform.values()):
        return ErrorName.SOURCE_REJECT, "the value is not a platform identity value"
    elif source == Source.PRIOR_TASK and not ctx.prior_has(value, None):
        return ErrorName.SOURCE_REJECT, "the value is not a known entity id"
    elif source in (Source.NODE_OUTPUT, Source.SHARED, Source.SESSION):
        pool = {Source.NODE_OUTPUT: [ctx.inputs, ctx.outputs], Source.SHARED: [ctx.shared],
                Source.SESSION: [ctx.session]}[Source(source)]
        if not any(canonical(value) in {canonical(v) for v in m.values()} for m in pool):
            return ErrorName.SOURCE_REJECT, f"the value is not among the {source} values"
    if spec is not None and spec.has_constant and canonical(spec.constant) != canonical(value):
        return ErrorName.SOURCE_REJECT, "the value differs from the contract's constant"
    return None


async def state_set(env: SessionEnv, node: NodeState, args: dict[str, Any]) -> CallResult:
    key = args.get("key")
    if not isinstance(key, str) or not key or key.startswith("_") or key in PLATFORM_FIELDS:
        return reject(ErrorName.STATE_KEY_RESERVED, f"{key!r} is a reserved key", "use another key")
    node.scratch[key] = args.get("value")
    return CallResult(ok=True, message=f"{key} noted")


async def evidence_get(env: SessionEnv, node: NodeState, args: dict[str, Any]) -> CallResult:
    eid = str(args.get("evidenceId") or "").strip()
    if not eid:
        return reject(ErrorName.EVIDENCE_PATH_INVALID, "evidenceId is empty", "give an evidence id such as e1")
    ev = await env.find_evidence(eid)
    if ev is None:
        return reject(ErrorName.EVIDENCE_PATH_INVALID, f"no evidence {eid}", None)
    return CallResult(ok=True, data={"tool": ev.tool, "status": ev.status, "businessOk": ev.business_ok,
                                     "response": ev.response})


async def session_info(env: SessionEnv, node: NodeState, args: dict[str, Any]) -> CallResult:
    return CallResult(ok=True, data={"sessionId": env.session.id, "taskId": active_task(env).id, "nodeId": node.id,
                                     "nodeState": node.state})


Handler = Callable[["SessionEnv", NodeState, dict[str, Any]], Awaitable[CallResult]]
HANDLERS: dict[str, Handler] = {
    "builtin_node_follow_up": follow_up,
    "builtin_node_approval": approval,
    "builtin_node_finish": finish,
    "builtin_node_fail": fail,
    "builtin_node_delegate": delegate,
    "builtin_output_set": output_set,
    "builtin_state_set": state_set,
    "builtin_evidence_get": evidence_get,
    "builtin_session_info": session_info,
}


async def call_builtin(env: SessionEnv, node: NodeState, name: str, args: dict[str, Any]) -> CallResult:
    """Run one builtin."""
    handler = HANDLERS.get(name)
    if handler is not None:
        return await handler(env, node, args)
    try:
        data = envtools.run(name, args, now=env.now(), rng=env.rng)
    except envtools.EnvToolError as exc:
        return CallResult(ok=False, error=None, message=str(exc), next="fix the arguments")
    return CallResult(ok=True, data=data)


__all__ = ["HANDLERS", "SPECS", "call_builtin", "offered"]
