"""Node execution: the ReAct loop of one skill working toward one goal (§10, §12, §14.3).

model step -> tool calls through the chain (in order) -> observations -> next step, until the node
finishes, fails, suspends (FOLLOW_UP / APPROVAL / VERIFY) or waits for a delegate. Uncertain
writes are settled before every model step (DESIGN decision 6).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from skillc.runtime import builtins
from skillc.runtime.chain import CallResult, object_args, run_chain
from skillc.runtime.gate import approval_summary
from skillc.runtime.model.base import ModelRequest, ToolCall
from skillc.runtime.prompting import tool_specs
from skillc.runtime.state import NodeState

if TYPE_CHECKING:
    from skillc.runtime.engine import Env

# Outcomes of run_node.
DONE, FAILED, SUSPENDED, WAITING, CANCELLED = "DONE", "FAILED", "SUSPENDED", "WAITING", "CANCELLED"


async def run_node(env: "Env", node: NodeState) -> str:
    """Run (or continue) a node until it ends, suspends or waits for a delegate."""
    node.state = "RUNNING"
    node.suspended = None
    answer_dangling_calls(node.messages)  # the node was started (opening messages) by the engine
    while True:
        outcome = await settle_open_writes(env, node)
        if outcome:
            return outcome
        if node.steps >= env.settings.node_step_limit:
            return finish_node(env, node, FAILED, reason=f"step limit ({env.settings.node_step_limit}) reached")
        # a snapshot: the conversation grows after the request (a recording model must see what was sent)
        request = ModelRequest(purpose="step", messages=list(node.messages), tools=tool_specs(env, node))
        response = await env.rt.model.complete(request)
        node.steps += 1
        assistant: dict[str, Any] = {"role": "assistant", "content": response.text or None}
        if response.tool_calls:
            assistant["tool_calls"] = [
                {"id": tc.id, "type": "function", "function": {"name": tc.name, "arguments": tc.arguments}}
                for tc in response.tool_calls
            ]
        node.messages.append(assistant)
        if not response.tool_calls:
            node.messages.append({"role": "user", "content": "Continue with a tool call: builtin_node_finish when the "
                                  "goal is reached, builtin_node_follow_up to ask the user, builtin_node_fail to give up."})
            node.no_progress += 1
            if node.no_progress >= env.settings.no_progress_limit:
                return finish_node(env, node, FAILED, reason="no progress: the model stopped calling tools")
            continue
        outcome = await _run_calls(env, node, response.tool_calls)
        if outcome:
            return outcome  # the engine saves when a node stops running
        env.save()


def answer_dangling_calls(messages: list[dict[str, Any]]) -> None:
    """Give every tool call of the conversation an answer. A process that died mid-call left its
    call unanswered; chat APIs refuse a conversation like that, so the call is answered with
    what is known: the process stopped before its result arrived."""
    i = 0
    while i < len(messages):
        msg = messages[i]
        i += 1
        calls = msg.get("tool_calls") if msg.get("role") == "assistant" else None
        if not calls:
            continue
        answered = set()
        while i < len(messages) and messages[i].get("role") == "tool":
            answered.add(messages[i].get("tool_call_id"))
            i += 1
        for call in calls:
            if call["id"] not in answered:
                messages.insert(i, {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(
                    {"ok": False, "message": "interrupted: the runtime stopped before this call's result arrived"})})
                i += 1


async def _run_calls(env: "Env", node: NodeState, calls: list[ToolCall]) -> str | None:
    for i, tc in enumerate(calls):
        result = await dispatch(env, node, tc.name, tc.arguments)
        record(env, node, tc.name, result, call_id=tc.id)
        outcome = after_call(env, node, result)
        if outcome:
            for rest in calls[i + 1 :]:
                node.messages.append({"role": "tool", "tool_call_id": rest.id,
                                      "content": json.dumps({"ok": False, "message": "not run: the node stopped"})})
            return outcome
    return None


def after_call(env: "Env", node: NodeState, result: CallResult) -> str | None:
    """Apply a call's effect on the node; the outcome when the node stops running."""
    if result.ok:
        # decision 13: any successful call ends a run of refusals, also one that suspends or delegates
        node.no_progress = 0
    if result.effect == "finish":
        return finish_node(env, node, DONE, output=node.output_text)
    if result.effect == "fail":
        return finish_node(env, node, FAILED, reason=node.reason or result.message)
    if result.effect == "suspend":
        suspend(env, node)
        return SUSPENDED
    if result.effect == "delegate":
        node.state = "WAITING"
        return WAITING
    if not result.ok:
        node.no_progress += 1
        if node.no_progress >= env.settings.no_progress_limit:
            return finish_node(env, node, FAILED,
                               reason=f"no progress: {node.no_progress} refused or failed calls in a row (last: {result.error})")
    return None


async def dispatch(env: "Env", node: NodeState, name: str, raw: Any) -> CallResult:
    """A builtin or a business call, with the progress label pushed when a tool starts (§4)."""
    if name.startswith("builtin_") and (name in builtins.HANDLERS or name in builtins.SPECS):
        args, refused = object_args(raw)
        if refused is not None:
            return refused
        result = await builtins.call_builtin(env, node, name, args)
        if result.args is None:
            result.args = args
        return result
    env.progress(node, name)
    return await run_chain(env, node, name, raw)


def record(env: "Env", node: NodeState, tool: str, result: CallResult, *, call_id: str | None) -> None:
    """The tool.call event (and write.settled), and the observation in the node's conversation."""
    env.emit("tool.call", node=node.id, tool=tool, builtin=tool.startswith("builtin_"), args=result.args,
             ok=result.ok, error=result.error, code=result.code, evidence=result.evidence, status=result.status,
             business_ok=result.business_ok, empty=result.empty, replayed=result.replayed,
             message=result.message or (result.observation() if result.data is not None else ""), next=result.next)
    if result.settled:
        env.emit("write.settled", node=node.id, **result.settled)
    if call_id is not None:
        node.messages.append({"role": "tool", "tool_call_id": call_id, "content": result.observation()})
    else:
        node.messages.append({"role": "user", "content": f"[{tool}] {result.observation()}"})


def suspend(env: "Env", node: NodeState) -> None:
    """Mark the node suspended and emit node.suspended with its question."""
    node.state = "SUSPENDED"
    kind = node.suspended
    fields: dict[str, Any] = {"kind": kind}
    if kind == "FOLLOW_UP" and node.follow_up:
        fields.update(question=node.follow_up.question, expected_fields=node.follow_up.expected_fields)
    elif kind == "APPROVAL" and node.pending:
        fields.update(question=node.pending.question, tool=node.pending.tool)
    elif kind == "VERIFY":
        ev = env.evidence.get(node.verify_evidence or "")
        fields.update(question=verify_question(env, node, ev), tool=ev.tool if ev else None)
    env.emit("node.suspended", node=node.id, **fields)


def verify_question(env: "Env", node: NodeState, ev: Any) -> str:
    """The VERIFY question put to the user: the write's parameter summary as in an approval
    (labels, sensitive values masked, platform arguments hidden, §5.2, §11)."""
    if ev is None:
        return "Did the last write take effect?"
    meta = env.skill_module(node.skill).TOOLS.get(ev.tool)
    summary = approval_summary(meta, ev.args) if meta is not None else \
        json.dumps(ev.args, ensure_ascii=False, default=str)
    return (f"The outcome of {ev.tool} is unknown (the call {ev.error or 'was interrupted'}). "
            f"Did it take effect?\n{summary}")


def question_of(env: "Env", node: NodeState) -> str:
    """The pending question of a suspended node."""
    if node.suspended == "FOLLOW_UP" and node.follow_up:
        return node.follow_up.question
    if node.suspended == "APPROVAL" and node.pending:
        return node.pending.question
    if node.suspended == "VERIFY":
        return verify_question(env, node, env.evidence.get(node.verify_evidence or ""))
    return ""


async def settle_open_writes(env: "Env", node: NodeState) -> str | None:
    """Verify uncertain writes (§14.3): by the contract's verify tool, else ask the user (VERIFY)."""
    for eid in list(node.evidence):
        ev = env.evidence.get(eid)
        if ev is None or ev.status not in ("UNKNOWN", "UNKNOWN_PRE_CALL"):
            continue
        module = env.skill_module(node.skill)
        meta = module.TOOLS.get(ev.tool)
        verify_meta = module.TOOLS.get(meta.verify_tool) if meta and meta.verify_tool else None
        # §6.4: the verify tool must be a NONE tool of contract.tools and in toolNames; otherwise
        # the write cannot be checked automatically and the user is asked.
        if (verify_meta is not None and verify_meta.side_effect == "NONE" and meta.verify_args is not None
                and meta.verify_tool in module.SKILL.tool_names and meta.verify_tool in env.catalog):
            env.current_node = node.id
            outcome = await env.rt.gateway.call(meta.verify_tool, meta.verify_args(ev.args))
            if not outcome.error:
                ok = verify_meta.judge(outcome.response).business_ok
                settle_write(env, node, ev, ok, via="verify", response=outcome.response)
                continue
        node.suspended = "VERIFY"
        node.verify_evidence = ev.id
        suspend(env, node)
        return SUSPENDED
    return None


def settle_write(env: "Env", node: NodeState, ev: Any, ok: bool, *, via: str, response: Any = None) -> None:
    """Settle an uncertain write as SUCCESS or FAILED and emit write.settled."""
    ev.status = "SUCCESS" if ok else "FAILED"
    ev.business_ok = True if ok else None
    if response is not None and ok:
        ev.response = response
    env.put_evidence(ev)
    env.emit("write.settled", node=node.id, evidence=ev.id, tool=ev.tool, status=ev.status, via=via)
    verdict = "took effect" if ok else "did NOT take effect"
    node.messages.append({"role": "user", "content": f"[runtime] The uncertain write {ev.id} ({ev.tool}) {verdict} "
                          f"(settled via {via})."})


def finish_node(env: "Env", node: NodeState, state: str, *, output: str | None = None, reason: str | None = None) -> str:
    """End a node: DONE shares outputs and entities (§8); emit node.finished."""
    node.state = state
    node.suspended = None
    if state == DONE:
        env.complete_outputs(node)
        env.emit("node.finished", node=node.id, state=state, output=output)
    else:
        node.reason = reason or node.reason
        env.emit("node.finished", node=node.id, state=state, reason=node.reason)
    return state
