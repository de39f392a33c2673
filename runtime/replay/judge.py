"""Judging one recorded conversation with the runtime's own chain (`chain.run_chain`).

The mapping from a conversation without a skillc plan to the chain's world is the same for every
conversation (docs/replay.md, "How a conversation is judged"):

- the conversation is one session with one task, so evidence and idempotency keys are scoped to
  the conversation; each skill that governs a call gets a node, and every node sees every other
  node's evidence (the conversation's evidence is one pool, newest first);
- the governing skill of a call is `--skill`, else the agent's skill whose toolNames hold the
  tool: the one that governed the conversation's latest such call, else the one holding most of
  the conversation's tools (ties: the agent's order); a tool no skill holds is judged by the
  latest skill (else the agent's first), where the catalog refuses it;
- the user's recorded messages so far are the USER source;
- the recorded answer stands in for the tool's and is judged by the contract like a live one;
- a write stopped for approval is "approval asked"; the user's confirmation is looked for (the
  latest user message before the call, if no write came between, else the next one after it)
  and reported beside it; only a confirmed write runs again, approved, through the chain, so its
  recorded answer becomes evidence;
- a refused call (or a write not confirmed) contributes no evidence: when the recording holds its
  answer, every later verdict of the conversation is counterfactual, and says so.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from skillc.runtime.call.chain import CallResult, run_chain
from skillc.runtime.outside.config import Settings
from skillc.runtime.words.errors import ErrorName
from skillc.runtime.mcp.result import ToolInfo
from skillc.runtime.replay import confirmation
from skillc.runtime.replay.env import ReplayEnv
from skillc.runtime.replay.recorded import Conversation, RecordedCall, TextReply, UserMessage
from skillc.runtime.compiled.skillmeta import Provenance
from skillc.runtime.seam.state import NodeState
from skillc.runtime.words.vocab import ConfirmationPlace, NodeStatus, Pairing, Reading, SideEffect, Verdict

BUILTIN_PREFIX = "builtin_"
QUOTE_CHARS = 300


@dataclass(slots=True)
class Confirmation:
    """The user message read as the answer to an approval question, quoted."""

    where: ConfirmationPlace
    text: str
    reading: Reading


@dataclass(slots=True)
class CallVerdict:
    """What the contracts would have done with one recorded call."""

    conversation: str
    index: int  # 1-based, in the conversation's order (parallel calls in the order listed)
    tool: str
    verdict: Verdict
    skill: str | None = None
    write: bool = False
    error: str | None = None  # the refusal's error name (ErrorName)
    code: Any = None  # its code, e.g. agent_runtime.40025
    message: str = ""
    args: Any = None  # as the trace shows them: bound, sensitive values masked
    call_id: str | None = None
    batch: int = 0
    pairing: Pairing = Pairing.NONE
    outcome: dict[str, Any] | None = None  # the recorded answer as the contract judged it
    confirmation: Confirmation | None = None
    after_confirmation: dict[str, Any] | None = None  # the approved run of a confirmed write
    counterfactual: bool = False  # an earlier call's answer was not taken as evidence
    provenance: Provenance | None = None  # argument -> the source it was accepted from


@dataclass(slots=True)
class ConversationResult:
    """One conversation's verdicts, and what the judge had to decide on the way."""

    id: str
    file: str
    line: int
    agent: str | None
    calls: list[CallVerdict] = field(default_factory=list)
    user_messages: int = 0
    text_replies: int = 0
    notes: list[str] = field(default_factory=list)
    counterfactual_from: int | None = None  # the index of the first call whose answer was not taken


@dataclass(frozen=True, slots=True)
class JudgeOptions:
    """What stays the same for every conversation of one replay."""

    settings: Settings = field(default_factory=Settings)
    agent: str | None = None
    skill: str | None = None
    platform: Mapping[str, Any] = field(default_factory=dict)


def choose_agent(studio: Any, conv: Conversation, given: str | None) -> str | None:
    """--agent, else the loadable agent whose skills hold most of the conversation's tools
    (ties: the first by code)."""
    if given is not None:
        return given
    tools = {item.tool for item in conv.items if isinstance(item, RecordedCall)}
    best, best_n = None, -1
    for code in sorted(studio.agents):
        held: set[str] = set()
        for key in studio.agents[code].skills:
            if key in studio.skills:
                held.update(studio.skills[key].SKILL.tool_names)
        if not held:
            continue
        n = len(tools & held)
        if n > best_n:
            best, best_n = code, n
    return best


class _Judge:
    """The state of one conversation's replay."""

    def __init__(self, studio: Any, conv: Conversation, options: JudgeOptions, agent: str) -> None:
        self.studio, self.conv, self.options = studio, conv, options
        catalog = {name: ToolInfo(name=name, title=None, description=None, input_schema=schema, server="recorded")
                   for name, schema in conv.tools.items()}
        self.env = ReplayEnv(studio, options.settings, agent, conv.id, dict(options.platform), catalog)
        self.skills = [options.skill] if options.skill else self.env.agent_skills(agent)
        self.nodes: dict[str, NodeState] = {}
        self.last_skill: str | None = None
        used = {item.tool for item in conv.items if isinstance(item, RecordedCall)}
        # how many of the conversation's tools each skill holds: the first choice among holders
        self.reach = {k: len(used & set(studio.skills[k].SKILL.tool_names)) for k in self.skills}
        self.result = ConversationResult(id=conv.id, file=conv.file, line=conv.line, agent=agent,
                                         notes=list(conv.notes))

    def governing(self, tool: str) -> str:
        if self.options.skill:
            return self.options.skill
        holders = [k for k in self.skills if tool in self.studio.skills[k].SKILL.tool_names]
        if self.last_skill in holders or (not holders and self.last_skill):
            return self.last_skill
        if not holders:
            return self.skills[0]
        return min(holders, key=lambda k: (-self.reach[k], self.skills.index(k)))

    def node_for(self, skill: str) -> NodeState:
        node = self.nodes.get(skill)
        if node is None:
            task = self.env.task
            assert task is not None
            node = NodeState(id=f"n{len(self.nodes) + 1}", task=task.id, skill=skill, state=NodeStatus.RUNNING,
                             deps=[n.id for n in self.nodes.values()])
            for other in self.nodes.values():
                other.deps.append(node.id)  # one pool of evidence: every node sees every other's
            self.nodes[skill] = node
            task.nodes[node.id] = node
            task.order.append(node.id)
        return node

    async def call(self, index: int, pos: int, rec: RecordedCall) -> CallVerdict:
        v = CallVerdict(conversation=self.conv.id, index=index, tool=rec.tool, verdict=Verdict.ALLOWED,
                        call_id=rec.call_id, batch=rec.batch, pairing=rec.pairing,
                        counterfactual=self.result.counterfactual_from is not None)
        if rec.tool.startswith(BUILTIN_PREFIX):
            v.verdict, v.args = Verdict.NOT_JUDGED, rec.arguments
            return v
        skill = self.governing(rec.tool)
        node = self.node_for(skill)
        self.last_skill = skill
        meta = self.studio.skills[skill].TOOLS.get(rec.tool)
        v.skill, v.write = skill, meta is not None and meta.side_effect == SideEffect.WRITE
        result, reached = await self._run(node, rec, approved=False)
        v.args, v.provenance = result.args, result.provenance
        if reached:
            v.outcome = outcome(result)
        elif result.replayed:
            v.verdict, v.message = Verdict.REPLAYED, result.message
        else:
            v.verdict = Verdict.APPROVAL_ASKED if result.error == ErrorName.APPROVAL_REQUIRED else Verdict.REFUSED
            v.error, v.code, v.message = result.error, result.code, result.message
        if v.verdict == Verdict.APPROVAL_ASKED:
            v.confirmation = self.confirmation_of(pos)
            if v.confirmation is not None and v.confirmation.reading == Reading.CONFIRMED:
                again, reached = await self._run(node, rec, approved=True)
                node.pending = None if again.error != ErrorName.APPROVAL_REQUIRED else node.pending
                v.after_confirmation = outcome(again) if reached else refusal(again)
                if not reached and not again.replayed:
                    self.mark_counterfactual(index, rec)
            else:
                node.pending = None  # the live node would have waited here; the write was never sent
                self.mark_counterfactual(index, rec)
        elif v.verdict == Verdict.REFUSED:
            self.mark_counterfactual(index, rec)
        return v

    async def _run(self, node: NodeState, rec: RecordedCall, *, approved: bool) -> tuple[CallResult, bool]:
        env = self.env
        env.stand_in(rec.answer, recorded=rec.pairing != Pairing.NONE, failed=rec.failed)
        before = env.reached
        result = await run_chain(env, node, rec.tool, rec.arguments, approved=approved)
        return result, env.reached > before

    def mark_counterfactual(self, index: int, rec: RecordedCall) -> None:
        # only an answer the recording holds can be missing from the evidence: a call that was
        # not answered there either (refused live too, in a trace) changes nothing that follows
        if self.result.counterfactual_from is None and rec.pairing != Pairing.NONE:
            self.result.counterfactual_from = index

    def confirmation_of(self, pos: int) -> Confirmation | None:
        """The latest user message before the call when no other write came between (the agent
        asked in its own words, the user answered, then it called), if it reads as a yes; else
        the first user message after the call (the answer the live runtime would have waited for)."""
        items = self.conv.items
        for k in range(pos - 1, -1, -1):
            item = items[k]
            if isinstance(item, UserMessage):
                reading = confirmation.read(item)
                if reading == Reading.CONFIRMED:
                    return Confirmation(ConfirmationPlace.BEFORE, quote(item), reading)
                break
            if isinstance(item, RecordedCall) and self._is_write(item.tool):
                break
        for item in items[pos + 1:]:
            if isinstance(item, UserMessage):
                return Confirmation(ConfirmationPlace.AFTER, quote(item), confirmation.read(item))
        return None

    def _is_write(self, tool: str) -> bool:
        for key in self.skills:
            meta = self.studio.skills[key].TOOLS.get(tool)
            if meta is not None and meta.side_effect == SideEffect.WRITE:
                return True
        return False


def quote(message: UserMessage) -> str:
    """The message as the report quotes it (a decision by its name)."""
    text = message.decision or message.text
    return text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "…"


def outcome(result: CallResult) -> dict[str, Any]:
    """The recorded answer as the contract judged it (§6): business verdict, emptiness, evidence."""
    out: dict[str, Any] = {"evidence": result.evidence, "status": result.status, "business_ok": result.business_ok,
                           "empty": result.empty}
    if result.error:
        out.update(error=result.error, code=result.code, message=result.message)
    return out


def refusal(result: CallResult) -> dict[str, Any]:
    """A refusal of the approved run (e.g. a rule checked again at confirmation)."""
    return {"verdict": Verdict.REPLAYED if result.replayed else Verdict.REFUSED, "error": result.error,
            "code": result.code, "message": result.message}


async def judge(studio: Any, conv: Conversation, options: JudgeOptions) -> ConversationResult:
    """Every recorded call of `conv` through the chain, in order (see the module's docstring)."""
    agent = choose_agent(studio, conv, options.agent)
    if agent is None or (not options.skill and not [k for k in studio.agents[agent].skills if k in studio.skills]):
        result = ConversationResult(id=conv.id, file=conv.file, line=conv.line, agent=agent, notes=list(conv.notes))
        result.notes.append("no loadable agent to judge this conversation with")
        return result
    j = _Judge(studio, conv, options, agent)
    index = 0
    for pos, item in enumerate(conv.items):
        if isinstance(item, UserMessage):
            j.result.user_messages += 1
            if item.decision is None:
                j.env.session.turn += 1
                j.env.session.user_messages.append({"turn": j.env.session.turn, "text": item.text})
        elif isinstance(item, TextReply):
            j.result.text_replies += 1
        else:
            index += 1
            j.result.calls.append(await j.call(index, pos, item))
    return j.result
