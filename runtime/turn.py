"""One turn of a session, as functions over its env (`turn_env.TurnEnv`).

`run_turn` holds the session's lease for the turn (runtime/durable.py) and commits its reply;
`play` starts the turn (trace context, turn number, the studio pinned by `reload`) and answers a
repeated input with the reply already given; `handle` sends the input where it belongs: the
pending question (`resume`), the running node, or a new task (`new_task`: route, intent, plan,
execute). docs/interpretations.md: Pending question, Restart, Reply, A lost reply.
"""
from __future__ import annotations

import logging
from typing import Any

from skillc.runtime.words.events import EventName
from skillc.runtime.text import border
from skillc.runtime.call import lifecycle
from skillc.runtime.graph import tasks
from skillc.runtime.words.errors import ErrorName
from skillc.runtime.call.evidence import settle_write
from skillc.runtime.call.lifecycle import finish_node, question_of
from skillc.runtime.model.base import ModelError
from skillc.runtime.loop.node import run_confirmed
from skillc.runtime.graph.planner import PlanningFailed, choose_skills, plan, route
from skillc.runtime.seam.seams import active_task
from skillc.runtime.seam.state import NodeState, TaskState
from skillc.runtime.store.base import ReplyRecord, StoreError
from skillc.runtime.graph.tasks import Reply
from skillc.runtime.turn_env import PinnedStudio, TurnEnv
from skillc.runtime.words.vocab import DECISIONS, FINAL_TASK, OPEN_STATUSES, Decision, NodeStatus, Suspension, TaskStatus

log = logging.getLogger("skillc.runtime")


async def run_turn(env: TurnEnv, message: str | None = None, answer: dict[str, Any] | None = None,
                   client_message_id: str | None = None, agent: str | None = None) -> Reply:
    """One turn under the session's lease: played, then committed with its reply."""
    # text from outside is kept only in a form that can be kept (runtime/text/border.py)
    message, answer = border.safe(message), border.safe(answer)
    client_message_id = border.safe(client_message_id)
    durable = env.durable
    async with durable.turn() as late:
        # answered already (its reply lost, or a decision delivered twice): that reply again
        same = durable.repeated(message, answer, client_message_id,
                                waiting=tasks.suspended_node(env.task) is not None)
        try:
            reply = await play(env, message, answer, client_message_id, same, agent)
        except StoreError as exc:
            raise await durable.fail(exc) from exc
        finally:
            env.studio = None  # between turns the live studio answers (see reload)
        if late is not None and same is None:  # a reply a dead turn never delivered comes first ("A lost reply")
            reply.text = f"{late.text}\n\n{reply.text}"
        record = ReplyRecord(session=env.id, turn=env.session.turn, text=reply.text, task=reply.task,
                             suspended=reply.suspended, kind=reply.kind, message=message, answer=answer,
                             client_message_id=client_message_id)
        try:
            await durable.commit(record, handed=late)
        except StoreError as exc:
            raise await durable.fail(exc) from exc
        durable.delivered = env.session.turn
        env.emit({"type": EventName.TURN_REPLY, "text": reply.text, "suspended": reply.suspended})
        env.rt.trace.flush()  # the turn's end is a stopping point of the trace file too
        return reply


async def play(env: TurnEnv, message: str | None, answer: dict[str, Any] | None, client_message_id: str | None,
               same: ReplyRecord | None, agent: str | None = None) -> Reply:
    """Start the turn and handle its input; a model or planning failure, or a runtime bug (unless
    the runtime is strict), is answered, not raised."""
    env.rt.trace.enter(env)  # this task's trace context: audit events and telemetry find their session
    env.session.turn += 1
    env.ended = env.task if env.task is not None and env.task.state in FINAL_TASK else None
    env.emit({"type": EventName.TURN_STARTED, "message": message} if message is not None
             else {"type": EventName.TURN_STARTED, "answer": answer})
    reload(env)
    if message is not None:
        entry: dict[str, Any] = {"turn": env.session.turn, "text": message}
        if client_message_id is not None:
            entry["client_message_id"] = client_message_id
        env.session.user_messages.append(entry)
    if same is not None:  # nothing is started: the stored reply is given again
        env.emit({"type": EventName.TURN_REPLAYED, "of_turn": same.turn})
        return Reply(same.text, same.suspended, same.kind, same.task)
    try:
        return await handle(env, message, answer, agent)
    except StoreError:
        raise  # the turn cannot be kept: the session is reloaded, the caller told
    except ModelError as exc:
        env.emit({"type": EventName.ERROR, "message": str(exc), "code": ModelError.name})
        # kind names the failure, so a reply given again (the same message re-sent) still says it failed
        return Reply(f"error: {exc}", False, ModelError.name, task=env.task.id if env.task else None)
    except PlanningFailed as exc:
        return planning_failed(env, exc)
    except Exception as exc:  # a runtime bug must not take the serving process down
        if env.rt.strict:
            raise
        log.exception("internal error in session %s, turn %s", env.session.id, env.session.turn)
        env.emit({"type": EventName.ERROR, "message": f"internal error: {type(exc).__name__}: {exc}"})
        return Reply(f"Something went wrong on our side ({type(exc).__name__}); the session is kept "
                     "and can continue.", False, task=env.task.id if env.task else None)


def reload(env: TurnEnv) -> None:
    """Refresh the studio, then pin it for the turn: a refresh meanwhile (another session's
    turn, the studio feed) swaps whole dicts, so the pinned ones stay one consistent studio
    and a node never meets two versions of its contract within one turn."""
    studio = env.rt.studio
    if hasattr(studio, "refresh"):
        studio.refresh()
    env.studio = PinnedStudio(studio.skills, studio.agents)
    for key, diags in sorted(getattr(studio, "rejected", {}).items()):
        env.emit({"type": EventName.SKILL_REJECTED, "skill": key,
                  "diagnostics": [{"code": d.get("code"), "message": d.get("message")} for d in diags]})


async def handle(env: TurnEnv, message: str | None, answer: dict[str, Any] | None, agent: str | None = None) -> Reply:
    """The input to the pending question, else a message to the running node, else a new task."""
    task = env.task
    if task is not None and task.state not in FINAL_TASK:
        node = tasks.suspended_node(task)
        if node is not None:
            return await resume(env, node, message, answer)
        running = tasks.running_node(task)
        if running is not None and message is not None:
            running.messages.append({"role": "user", "content": message})
            return await tasks.execute(env)
    if message is None:
        return Reply("Nothing is waiting for a decision.", False)
    return await new_task(env, message, agent)


async def new_task(env: TurnEnv, message: str, chosen: str | None = None) -> Reply:
    """A new task for `message`: routed (or to the agent the user `chosen`), planned, executed."""
    tid = f"t{env.session.next_task}"
    env.session.next_task += 1
    # Earlier tasks' settled records leave memory, as when the session is reopened
    # (durable.load_held): a node sees only its own task's evidence (§9), and a long session
    # holds as few records at turn 1,000 as at turn 10 (found by id in the store if asked).
    env.evidence = {eid: ev for eid, ev in env.evidence.items() if ev.status in OPEN_STATUSES}
    env.task = TaskState(id=tid, session=env.session.id, agent="", message=message, turn=env.session.turn,
                         evidence_from=env.session.next_evidence)
    env.session.tasks.append(tid)
    env.session.active_task = tid
    if chosen is None:
        agent, via = await route(env, message)
    elif chosen in env.loadable_agents():
        agent, via = chosen, "user"  # the user picked it: no routing
    else:  # loadable when sent, but the studio reloaded at this turn's start dropped it
        raise PlanningFailed(ErrorName.SKILL_NOT_FOUND, f"agent {chosen} has no loadable skill any more")
    env.task.agent = agent
    env.emit({"type": EventName.AGENT_ROUTED, "agent": agent, "via": via})
    candidates = await choose_skills(env, agent, message)
    nodes, how = await plan(env, agent, candidates, message)
    tasks.add_planned(env, nodes, how)
    await env.save()
    return await tasks.execute(env)


def planning_failed(env: TurnEnv, exc: PlanningFailed) -> Reply:
    """The task could not be planned: it fails, and the reply says why."""
    if env.task is not None:
        env.task.state = TaskStatus.FAILED
        env.task.reason = exc.name
        env.emit({"type": EventName.TASK_FINISHED, "state": TaskStatus.FAILED, "reason": exc.name, "message": str(exc)})
    return Reply(f"I could not plan this: {exc}", False, task=env.task.id if env.task else None)


async def resume(env: TurnEnv, node: NodeState, message: str | None, answer: dict[str, Any] | None) -> Reply:
    """The input to a suspended node's question: a FOLLOW_UP's answer, a VERIFY's verdict, or an
    APPROVAL's decision (§14.1: a confirmation too old is asked again)."""
    kind = node.suspended
    task = active_task(env)
    if kind == Suspension.FOLLOW_UP:
        if message is None:
            return Reply(question_of(env, node), True, kind)
        fu = node.follow_up
        assert fu is not None  # a FOLLOW_UP suspension holds its question
        fu.answer, fu.answered_turn = message, env.session.turn
        node.answered, node.follow_up = fu, None
        env.emit({"type": EventName.NODE_RESUMED, "node": node.id, "kind": kind, "answer": message})
        node.messages.append({"role": "user", "content": f"Answer to your question \"{fu.question}\""
                              f"{' (fields: ' + ', '.join(fu.expected_fields) + ')' if fu.expected_fields else ''}: {message}"})
        return await tasks.execute(env)
    if answer is None:
        return Reply(question_of(env, node), True, kind, task.id)
    if kind == Suspension.VERIFY:
        verified = answer.get("verified")
        if not isinstance(verified, bool):
            return Reply("Answer with verified: true or false. " + question_of(env, node), True, kind, task.id)
        env.emit({"type": EventName.NODE_RESUMED, "node": node.id, "kind": kind, "answer": answer})
        ev = env.evidence[node.verify_evidence or ""]
        node.verify_evidence = None
        settle_write(env, node, ev, verified, via="user")
        return await tasks.execute(env)
    decision = answer.get("decision")
    if decision not in DECISIONS:
        return Reply("Answer with decision CONFIRM, REJECT or CANCEL. " + question_of(env, node), True, kind, task.id)
    env.emit({"type": EventName.NODE_RESUMED, "node": node.id, "kind": kind, "answer": answer})
    pending = node.pending
    assert pending is not None  # an APPROVAL suspension holds the gated call
    if decision == Decision.CONFIRM:
        if env.now() - pending.asked_at > env.settings.reconfirm_after:
            pending.asked_at = env.now()  # the runtime asks again, no model step ("Re-confirmation")
            lifecycle.ask(node, Suspension.APPROVAL)
            lifecycle.suspend(env, node)
            return Reply(question_of(env, node), True, kind, task.id)
        if await run_confirmed(env, node) == lifecycle.SUSPENDED and node.suspended == Suspension.APPROVAL:
            # what would run now is not what was confirmed (re-bound arguments): asked again
            return Reply(question_of(env, node), True, kind, task.id)
        return await tasks.execute(env)
    node.pending = None
    tool = pending.tool
    if decision == Decision.REJECT:
        finish_node(env, node, NodeStatus.CANCELLED, reason=f"the user rejected {tool}")
    return tasks.cancel_task(env, f"the user {'rejected' if decision == Decision.REJECT else 'cancelled'} {tool}; "
                             f"nothing was changed:\n{pending.summary}")
