"""Node execution: the ReAct loop of one skill working toward one goal (§10, §12, §14.3).

model step -> tool calls through the chain (in order) -> observations -> next step, until the node
finishes, fails, suspends (FOLLOW_UP / APPROVAL / VERIFY) or waits for a delegate. Uncertain
writes are settled before every model step (docs/interpretations.md: Uncertain writes).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from skillc.runtime.text import border
from skillc.runtime.loop import builtins
from skillc.runtime.call import lifecycle
from skillc.runtime.call.chain import CallResult, object_args, record, run_call
from skillc.runtime.call.evidence import settle_open_writes
from skillc.runtime.call.lifecycle import DONE, FAILED, finish_node
from skillc.runtime.model.base import ModelRequest, ToolCall
from skillc.runtime.loop.prompting import tool_specs
from skillc.runtime.seam.state import NodeState
from skillc.runtime.words.errors import ErrorName
from skillc.runtime.words.vocab import Effect, NodeStatus, Suspension

MAX_NAME = 256  # characters of a tool name or call id the model sends (MCP names are far shorter)

if TYPE_CHECKING:
    from skillc.runtime.seam.seams import SessionEnv


async def run_node(env: SessionEnv, node: NodeState) -> NodeStatus:
    """Run (or continue) a node until it ends, suspends or waits for a delegate."""
    lifecycle.run(node)
    answer_dangling_calls(node.messages)  # the node was started (opening messages) by tasks.start_node
    while True:
        outcome = await settle_open_writes(env, node)
        if outcome:
            return outcome
        if node.steps >= env.settings.node_step_limit:
            return finish_node(env, node, FAILED, reason=f"step limit ({env.settings.node_step_limit}) reached")
        # a snapshot: the conversation grows after the request (a recording model must see what was sent)
        request = ModelRequest(purpose="step", messages=list(node.messages), tools=tool_specs(env, node))
        response = await env.model.complete(request)
        node.steps += 1
        # what the model said is kept in the conversation (and the store) only in a form that can
        # be kept: lone surrogates repaired (border.safe); its arguments are still judged as sent
        assistant: dict[str, Any] = {"role": "assistant", "content": border.safe(response.text) or None}
        calls = [_at_border(tc) for tc in response.tool_calls]
        if calls:
            assistant["tool_calls"] = [
                {"id": tc.id, "type": "function", "function": {"name": tc.name, "arguments": border.safe(tc.arguments)}}
                for tc in calls
            ]
        node.messages.append(assistant)
        if not calls:
            node.messages.append({"role": "user", "content": "Continue with a tool call: builtin_node_finish when the "
                                  "goal is reached, builtin_node_follow_up to ask the user, builtin_node_fail to give up."})
            node.no_progress += 1
            if node.no_progress >= env.settings.no_progress_limit:
                return finish_node(env, node, FAILED, reason="no progress: the model stopped calling tools")
            continue
        outcome = await _run_calls(env, node, calls)
        if outcome:
            return outcome  # tasks.execute saves when a node stops running
        await env.save()


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


def _at_border(tc: ToolCall) -> ToolCall:
    """A model's tool call with its name and id in a form that can be kept (traced, stored, sent
    back): a lone surrogate becomes U+FFFD and a name past 256 characters is cut, so such a name
    matches no tool and the call is refused (CATALOG_DENIED), never an internal error."""
    name, ident = border.clean_text(tc.name, MAX_NAME), border.clean_text(tc.id, MAX_NAME)
    return tc if name is tc.name and ident is tc.id else ToolCall(id=ident, name=name, arguments=tc.arguments)


async def _run_calls(env: SessionEnv, node: NodeState, calls: list[ToolCall]) -> NodeStatus | None:
    for i, tc in enumerate(calls):
        result = await dispatch(env, node, tc.name, tc.arguments)
        observe(node, tc.name, result, call_id=tc.id)
        outcome = after_call(env, node, result)
        if outcome:
            for rest in calls[i + 1 :]:
                node.messages.append({"role": "tool", "tool_call_id": rest.id,
                                      "content": json.dumps({"ok": False, "message": "not run: the node stopped"})})
            return outcome
    return None


def after_call(env: SessionEnv, node: NodeState, result: CallResult) -> NodeStatus | None:
    """Apply a call's effect on the node; the outcome when the node stops running."""
    if result.ok:
        # any successful call ends a run of refusals, also one that suspends or delegates
        # (docs/interpretations.md: Limits)
        node.no_progress = 0
    if result.effect == Effect.FINISH:
        return finish_node(env, node, DONE, output=node.output_text)
    if result.effect == Effect.FAIL:
        return finish_node(env, node, FAILED, reason=node.reason or result.message)
    if result.effect == Effect.SUSPEND:
        return lifecycle.suspend(env, node)
    if result.effect == Effect.DELEGATE:
        return lifecycle.wait(node)
    if not result.ok:
        node.no_progress += 1
        if node.no_progress >= env.settings.no_progress_limit:
            return finish_node(env, node, FAILED,
                               reason=f"no progress: {node.no_progress} refused or failed calls in a row (last: {result.error})")
    return None


async def dispatch(env: SessionEnv, node: NodeState, name: str, raw: Any) -> CallResult:
    """One call of the model's, in the trace when it returns: a business call is handed to the
    chain once (`chain.run_call`: progress label, §13, the trace), a builtin is run here and
    recorded the same way (`chain.record`)."""
    if name.startswith("builtin_") and (name in builtins.HANDLERS or name in builtins.SPECS):
        result = await _builtin(env, node, name, raw)
        record(env, node, name, result)
        return result
    return await run_call(env, node, name, raw)


async def _builtin(env: SessionEnv, node: NodeState, name: str, raw: Any) -> CallResult:
    args, refused = object_args(raw)
    if refused is not None or args is None:
        return refused or CallResult(ok=False)
    result = await builtins.call_builtin(env, node, name, args)
    if result.args is None:
        result.args = args
    return result


def observe(node: NodeState, tool: str, result: CallResult, *, call_id: str | None) -> None:
    """The call's observation in the node's conversation (its trace event is written already)."""
    if call_id is not None:
        node.messages.append({"role": "tool", "tool_call_id": call_id, "content": result.observation()})
    else:
        node.messages.append({"role": "user", "content": f"[{tool}] {result.observation()}"})


async def run_confirmed(env: SessionEnv, node: NodeState) -> NodeStatus | None:
    """The user confirmed the gated write (§14.1 step 3): run it through the chain without the
    gate's question, record it and apply its effect, as any call of the node's loop."""
    pending = node.pending
    assert pending is not None
    lifecycle.run(node)
    # run_call pushes the progress label: the confirming turn shows what it sends, as the gated one did
    result = await run_call(env, node, pending.tool, pending.args, approved=True)
    node.pending = None if result.error != ErrorName.APPROVAL_REQUIRED else node.pending
    observe(node, pending.tool, result, call_id=None)
    if result.effect == Effect.SUSPEND:  # re-bound arguments differ from the approved ones: asked again
        lifecycle.ask(node, Suspension.APPROVAL)
    return after_call(env, node, result)
