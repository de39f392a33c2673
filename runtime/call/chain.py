"""The tool-call chain (§13): small steps run by a plain loop, then the call, its settlement and
its record in the trace.

ArgPolicy -> ArgBinding -> ParamContract -> Rules -> Fingerprint -> WriteGate -> call ->
ResponseContract -> Evidence -> Fingerprint count (`run_chain`), then the trace (`record`).
(Rules, a tool contract's `rules`, are a skillc extension: docs/reference/rules.md.) A step
returns None to continue or a CallResult to stop; a rejection before the call registers no
evidence. A node hands a business call to `run_call` once and gets the CallResult back with the
call already in the trace (docs/ARCHITECTURE.md: One tool call); replay and the benchmarks run
`run_chain` alone.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from skillc.runtime.words.events import EventName
from skillc.runtime.text import border
from skillc.runtime.compiled.skillmeta import ParamIssue, Provenance, ToolMeta
from skillc.runtime.compiled.values import canonical
from skillc.runtime.call.context import NodeContext
from skillc.runtime.words.errors import code_of
from skillc.runtime.words.event_types import Settlement, ToolCall
from skillc.runtime.call.evidence import UNSETTLED, register, settle_success
from skillc.runtime.call.gate import approval_needed, approval_summary, idempotency_key
from skillc.runtime.call.rules import call_scope, judge
from skillc.runtime.seam.state import Evidence, NodeState, PendingApproval
from skillc.runtime.outside.redact import mask_args
from skillc.runtime.words.errors import ErrorName
from skillc.runtime.words.vocab import Action, Effect, EvidenceStatus, RuleStatus, SideEffect

if TYPE_CHECKING:
    from skillc.runtime.seam.seams import SessionEnv

# §14.4: which call failures leave a write's outcome uncertain.
UNCERTAIN = frozenset({ErrorName.TOOL_TIMEOUT, ErrorName.TOOL_IO_ERROR, ErrorName.MCP_RPC_ERROR, ErrorName.TOOL_ERROR})
MAX_DATA_CHARS = 4000
# what `json.dumps(obs, ensure_ascii=False, default=str)` does, its encoder built once (five calls a turn)
_OBSERVATION = json.JSONEncoder(ensure_ascii=False, default=str).encode


@dataclass(slots=True)
class CallResult:
    """What one tool call (business or builtin) came to: the trace fields and the observation."""

    ok: bool
    error: str | None = None
    code: Any = None
    message: str = ""
    next: str | None = None
    evidence: str | None = None
    status: EvidenceStatus | None = None
    business_ok: bool | None = None
    empty: bool | None = None
    replayed: bool = False
    data: Any = None
    args: Any = None
    effect: Effect | None = None  # what the call makes of its node (runtime/loop/node.py after_call)
    settled: Settlement | None = None  # a write.settled event to emit after tool.call
    provenance: Provenance | None = None  # argument -> the source it was accepted from (§5.3)
    rules: list[dict[str, Any]] | None = None  # the rules that refused the call, each with its message
    # `observation()` as last made, with what it was made of: the trace and the conversation both
    # show it, so a call's answer is encoded once
    seen: tuple[tuple[Any, ...], str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.error and self.code is None:
            self.code = code_of(self.error)

    def observation(self) -> str:
        """Compact JSON the model sees: code, name, message and the next-step hint."""
        made_of = (self.ok, self.error, self.code, self.message, self.next, self.rules, self.evidence, self.replayed,
                   self.empty, self.data)
        seen = self.seen
        if seen is not None and all(a is b for a, b in zip(seen[0], made_of)):
            return seen[1]
        text = self._observation()
        self.seen = (made_of, text)
        return text

    def _observation(self) -> str:
        obs: dict[str, Any] = {"ok": self.ok}
        if self.error:
            obs.update(name=self.error, code=self.code)
        if self.message:
            obs["message"] = self.message
        if self.next:
            obs["next"] = self.next
        if self.rules:
            obs["rules"] = self.rules
        if self.evidence:
            obs["evidence"] = self.evidence
        if self.replayed:
            obs["replayed"] = True
        if self.empty:
            obs["empty"] = True
        if self.data is not None:
            obs["data"] = self.data
        text = _OBSERVATION(obs)
        if len(text) > MAX_DATA_CHARS:
            obs["data"] = _OBSERVATION(self.data)[:MAX_DATA_CHARS] + "…"
            text = _OBSERVATION(obs)
        return text


def reject(error: str, message: str, next_hint: str | None = None, args: Any = None,
           effect: Effect | None = None) -> CallResult:
    """A refusal before the call."""
    return CallResult(ok=False, error=error, message=message, next=next_hint, args=args, effect=effect)


@dataclass(slots=True)
class Call:
    """One business call travelling through the chain."""

    env: SessionEnv
    node: NodeState
    tool: str
    raw: Any
    approved: bool = False
    args: dict[str, Any] = field(default_factory=dict)
    meta: ToolMeta | None = None
    bound: dict[str, str] = field(default_factory=dict)
    ctx: NodeContext | None = None
    sig: str = ""
    idem: str | None = None
    provenance: Provenance | None = None
    rules_held: tuple[str, ...] = ()  # names of the rules that applied and held (the approval lists them)

    def trace_args(self) -> Any:
        """The arguments as the trace shows them: sensitive values as "***"."""
        if self.meta is None:
            return self.args
        return mask_args(self.args, self.meta.sensitive_paths)


# ---------------------------------------------------------------- schema check (ArgPolicy)

def load_args(raw: Any) -> Any:
    """The arguments as the model sent them, checked at the border (runtime/text/border.py), as a
    value of the call's own: text is parsed, an object copied; raises border.Refused (reason
    "json" when the text is not JSON)."""
    if isinstance(raw, str):
        return border.parse(raw) if raw.strip() else {}
    return border.checked_copy(raw)


def object_args(raw: Any) -> tuple[dict[str, Any] | None, CallResult | None]:
    """The arguments as a JSON object, or the refusal: ARG_JSON_INVALID / ARG_REJECTED (§13 step 1)."""
    try:
        value = load_args(raw)
    except border.Refused as exc:
        if exc.reason == "json":
            return None, reject(ErrorName.ARG_JSON_INVALID, f"arguments are {exc.detail}",
                                "send the arguments as one JSON object", args=border.clean(raw))
        # invalid Unicode, nesting or numbers past the limits: refused here, once, so nothing
        # downstream (store, trace, prompts) ever holds such a value
        return None, reject(ErrorName.ARG_REJECTED, f"arguments refused: {exc}",
                            "send plain JSON: valid text, shallow nesting, ordinary numbers", args=border.clean(raw))
    if not isinstance(value, dict):
        return None, reject(ErrorName.ARG_REJECTED, "arguments must be a JSON object", "send the arguments as one JSON object",
                            args=value)
    return value, None


def step_arg_policy(c: Call) -> CallResult | None:
    """Arguments must be a JSON object with the schema's required fields (from/const exempt)."""
    raw, refused = object_args(c.raw)
    if refused is not None:
        return refused
    assert raw is not None  # refused above otherwise
    c.args = raw  # parsed or copied: the call's own
    info = c.env.catalog.get(c.tool)
    exempt = c.meta.bound_names if c.meta is not None else ()
    missing = [r for r in (info.required if info else ())
               if r not in exempt and (r not in c.args or c.args[r] is None)]
    if missing:
        # c.trace_args(): sensitive values never reach the trace, not even in a refusal.
        return reject(ErrorName.ARG_REJECTED, f"missing required argument(s): {', '.join(missing)}",
                      "call again with every required argument", args=c.trace_args())
    return None


def _parsed(raw: Any) -> Any:
    """The arguments as JSON (the raw text when it does not parse), for the trace of a refusal."""
    try:
        return load_args(raw)
    except border.Refused:
        return border.clean(raw)


def step_arg_binding(c: Call) -> CallResult | None:
    """from/const overwrite the model's values (§5.2)."""
    if c.meta is not None:
        assert c.ctx is not None  # set by run_chain before the steps
        c.bound = c.meta.bind(c.args, c.ctx)
    return None


def _label(c: Call, param: str) -> str:
    meta = c.meta.args.get(param) if c.meta else None
    return (meta.label if meta and meta.label else param)


def step_param_contract(c: Call) -> CallResult | None:
    """required / sources / enum / missing (§5.3, §5.5): the refusal's code is the issue acted
    upon (§5.5's priority); its message and next step name every failing argument."""
    if c.meta is None:
        return None
    assert c.ctx is not None
    result = c.meta.check(c.args, c.bound, c.ctx)
    c.provenance = result.provenance or None
    issue = result.issue
    if issue is None:
        return None
    issues = sorted(result.all_issues, key=lambda i: i is not issue)  # the one acted upon first
    whys = [_why(c, i) for i in issues]
    return reject(_ERROR_OF[Action(issue.action)], "; ".join(whys), "; ".join(_next_steps(c, issues)), c.trace_args())


_ERROR_OF = {Action.ASK_USER: ErrorName.PARAM_PROVENANCE_ASK_USER, Action.CALL_TOOL: ErrorName.PARAM_PROVENANCE_CALL_TOOL,
             Action.FAIL: ErrorName.PARAM_PROVENANCE_FAIL, Action.REJECT: ErrorName.PARAM_PROVENANCE_REJECTED}


def _why(c: Call, issue: ParamIssue) -> str:
    """What is wrong with one argument, in the words the model reads."""
    label = issue.label or _label(c, issue.param)
    if issue.action == Action.ASK_USER:
        return {"missing": f"{label} ({issue.param}) is missing",
                "enum": f"{label} ({issue.param}) is not one of the allowed values",
                "provenance": f"{label} ({issue.param}) must come from the user"}[issue.reason]
    if issue.action == Action.CALL_TOOL:
        return f"{label} ({issue.param}) is missing"
    if issue.action == Action.FAIL:
        return issue.message or f"{label} ({issue.param}) is missing"
    return f"the value of {label} ({issue.param}) does not come from an allowed source; do not make values up"


def _next_steps(c: Call, issues: list[ParamIssue]) -> list[str]:
    """One next step per failing argument, in order; the arguments to ask the user for share one
    follow-up (its expectedFields list them all)."""
    steps: list[str] = []
    asks = [i for i in issues if i.action == Action.ASK_USER]
    for i in issues:
        if i.action == Action.ASK_USER:
            if i is asks[0]:
                labels = ", ".join(dict.fromkeys(a.label or _label(c, a.param) for a in asks))
                fields = ", ".join(dict.fromkeys(f'"{a.param}"' for a in asks))
                steps.append(f"call builtin_node_follow_up to ask the user for {labels} (expectedFields: [{fields}])")
        elif i.action == Action.CALL_TOOL:
            steps.append(f"call {i.tool} first to look the value up, then call {c.tool} again")
        elif i.action == Action.FAIL:
            steps.append(f"call builtin_node_fail with the reason: {_why(c, i)}")
        else:
            steps.append("ask the user (builtin_node_follow_up), call a lookup tool first, or fail (builtin_node_fail)"
                         + ("" if len(issues) == 1 else f" for {i.label or _label(c, i.param)} ({i.param})"))
    return list(dict.fromkeys(steps))


def step_rules(c: Call) -> CallResult | None:
    """The tool contract's rules: all of them are judged, and any false or undecidable one
    refuses the call, naming every such rule with its message (not only the first)."""
    if c.meta is None or not c.meta.rules:
        return None
    assert c.ctx is not None
    verdict = judge(c.meta.rules, call_scope(c.ctx, c.args, c.env.now))
    if verdict.all_held:  # the common case: no outcome objects, the names as the module states them
        c.rules_held = c.meta.rule_names
        return None
    c.rules_held = tuple(o.rule.name for o in verdict.held)
    failed = verdict.failed
    if not failed:  # some guard did not apply, every rule that applied held
        return None
    violated = any(o.status == RuleStatus.VIOLATED for o in failed)
    message = " ".join(f"[{o.rule.name}] {o.rule.message}" + (f" (cannot be decided: {o.why})" if o.why else "")
                       for o in failed)
    hint = ("do not send the same call again: do what each rule's message says (ask the user, look the record up, "
            "or choose another value)")
    result = reject(ErrorName.RULE_VIOLATED if violated else ErrorName.RULE_UNDECIDABLE, message, hint, c.trace_args())
    result.rules = [o.describe() for o in failed]
    return result


def _summary(c: Call) -> str:
    """The approval summary (§14.1) and, when the tool has rules, the ones that held."""
    assert c.meta is not None
    summary = approval_summary(c.meta, c.args)
    if c.rules_held:
        summary += ("\n" if summary else "") + "Rules that hold: " + ", ".join(c.rules_held)
    return summary


def step_fingerprint(c: Call) -> CallResult | None:
    """The (L+1)-th identical successful call in a row fails the node (docs/interpretations.md: Fingerprint)."""
    c.sig = c.tool + canonical(c.args)
    if c.approved:
        return None
    limit = c.env.settings.fingerprint_limit
    if c.node.fp_sig == c.sig and c.node.fp_count >= limit:
        # Name the limit: with `fingerprint-limit: 1` "called 1 times" read as if the refused
        # attempt were the first one.
        times = "once" if c.node.fp_count == 1 else f"{c.node.fp_count} times"
        return reject(ErrorName.FINGERPRINT_TRIP,
                      f"{c.tool} already succeeded {times} in a row with the same arguments (limit {limit}); "
                      "the node fails",
                      None, c.trace_args(), effect=Effect.FAIL)
    return None


def step_write_gate(c: Call) -> CallResult | None:
    """Idempotency (§14.2) and approval (§14.1) for WRITE tools."""
    if c.meta is None or c.meta.side_effect != SideEffect.WRITE:
        return None
    env = c.env
    c.idem = idempotency_key(c.tool, c.meta, c.args)
    prev = env.evidence.get(env.task.idem.get(c.idem, "")) if env.task else None
    if prev is not None:
        if prev.completed:
            if prev.node != c.node.id and prev.id not in c.node.replayed:
                c.node.replayed.append(prev.id)  # "A replayed target completes the node" (docs/interpretations.md)
            return CallResult(ok=True, evidence=prev.id, status=prev.status, business_ok=prev.business_ok,
                              empty=prev.empty, replayed=True, data=prev.response, args=c.trace_args(),
                              message="this write already succeeded; its earlier result is returned, nothing was sent again")
        if prev.status == EvidenceStatus.STARTED:
            return reject(ErrorName.WRITE_IN_FLIGHT, f"the same write ({prev.id}) is in flight", "wait for its outcome", c.trace_args())
        if prev.status in UNSETTLED:
            return reject(ErrorName.WRITE_PENDING_VERIFY, f"the outcome of the same write ({prev.id}) is not known yet",
                          "wait until it is verified; do not send it again", c.trace_args())
    if c.approved:
        return _confirmed_unchanged(c)
    if not approval_needed(c.tool, c.meta, env.settings):
        return None
    summary = _summary(c)
    c.node.pending = PendingApproval(tool=c.tool, args=copy.deepcopy(c.args), summary=summary)
    return reject(ErrorName.APPROVAL_REQUIRED, f"{c.tool} changes data and needs the user's confirmation",
                  f"call builtin_node_approval with a short summary and toolName \"{c.tool}\"", c.trace_args())


def _confirmed_unchanged(c: Call) -> CallResult | None:
    """§14.1 step 3: a confirmed write runs only if its parameter summary is what the user saw;
    otherwise the new call is gated again (the user must confirm what will really be sent)."""
    pending = c.node.pending
    if pending is None or pending.tool != c.tool or c.meta is None:
        return None
    summary = _summary(c)
    if summary == pending.summary and canonical(c.args) == canonical(pending.args):
        return None  # exactly the bound call the user approved (its digest covers these arguments)
    if summary == pending.summary:
        # Only what the summary hides changed: a platform field bound again from a new identity
        # (a session reopened after a restart). The user is asked the same question again, by the
        # runtime, for the arguments that would run now; nothing was sent.
        c.node.pending = PendingApproval(tool=c.tool, args=copy.deepcopy(c.args), summary=summary, asked=True,
                                         question=pending.question, asked_at=c.env.now())
        return reject(ErrorName.APPROVAL_REQUIRED, f"the bound arguments of {c.tool} are not the ones the user "
                      "confirmed; it was not sent and the user is asked again", None, c.trace_args(), effect=Effect.SUSPEND)
    c.node.pending = PendingApproval(tool=c.tool, args=copy.deepcopy(c.args), summary=summary)
    return reject(ErrorName.APPROVAL_REQUIRED, f"the arguments of {c.tool} changed after the user confirmed; it was not sent",
                  f"call builtin_node_approval again with toolName \"{c.tool}\"", c.trace_args())


BEFORE: tuple[Callable[[Call], CallResult | None], ...] = (
    step_arg_policy, step_arg_binding, step_param_contract, step_rules, step_fingerprint, step_write_gate,
)


async def run_call(env: SessionEnv, node: NodeState, tool: str, raw: Any, *, approved: bool = False) -> CallResult:
    """One business call of a node, from the model's arguments to the trace: its progress label
    (§4), the chain (`run_chain`) and, as the chain's last step, its record (`record`)."""
    env.progress(node, tool)
    result = await run_chain(env, node, tool, raw, approved=approved)
    record(env, node, tool, result)
    return result


def record(env: SessionEnv, node: NodeState, tool: str, result: CallResult) -> None:
    """A call's tool.call event (and write.settled), business or builtin, built here where its
    facts are and emitted through the session's one seam, `SessionEnv.emit`."""
    call: ToolCall = {"type": EventName.TOOL_CALL, "node": node.id, "tool": tool, "builtin": tool.startswith("builtin_"),
                      "args": result.args, "ok": result.ok, "error": result.error, "code": result.code,
                      "evidence": result.evidence, "status": result.status, "business_ok": result.business_ok,
                      "empty": result.empty, "replayed": result.replayed,
                      "message": result.message or (result.observation() if result.data is not None else ""),
                      "next": result.next}
    if result.provenance:
        call["provenance"] = result.provenance
    env.emit(call)
    if result.settled:
        s = result.settled
        env.emit({"type": EventName.WRITE_SETTLED, "node": node.id, "evidence": s["evidence"], "tool": s["tool"],
                  "status": s["status"], "via": s["via"]})


async def run_chain(env: SessionEnv, node: NodeState, tool: str, raw: Any, *, approved: bool = False) -> CallResult:
    """Run one business call through the whole chain (no trace: `run_call` records it)."""
    skill = env.skill_module(node.skill)
    c = Call(env=env, node=node, tool=tool, raw=raw, approved=approved, meta=skill.TOOLS.get(tool))
    if tool not in skill.SKILL.tool_names:
        # A tool configured in contract.tools but left out of toolNames is still refused (§1.3);
        # its sensitive arguments stay masked in the trace.
        parsed = _parsed(raw)
        c.args = parsed if isinstance(parsed, dict) else {}
        return reject(ErrorName.CATALOG_DENIED, f"{tool} is not callable from this node",
                      "use only the tools in your catalog", args=c.trace_args() if isinstance(parsed, dict) else parsed)
    c.ctx = NodeContext(env, node)
    if c.meta is not None and c.meta.side_effect == SideEffect.WRITE and node.target is None:
        node.target = tool  # §10.1 rule 3
    for step in BEFORE:
        result = step(c)
        if result is not None:
            result.provenance = c.provenance
            return result
    result = await invoke(c)
    result.provenance = c.provenance
    return result


async def invoke(c: Call) -> CallResult:
    """The call itself, then ResponseContract, Evidence and the fingerprint count."""
    env, node, meta = c.env, c.node, c.meta
    write = meta is not None and meta.side_effect == SideEffect.WRITE
    ev = Evidence(id="", task=env.task.id if env.task else "", node=node.id, tool=c.tool, args=c.args,
                  side_effect=SideEffect.WRITE if write else SideEffect.NONE, turn=env.session.turn, idem_key=c.idem)
    if write:
        register(env, ev)  # pre-registered and committed before the tool is called
        await env.save()
    outcome = await env.call_tool(node, c.tool, c.args)
    if not write:
        register(env, ev, store=False)  # stored once, when settled below
    args = c.trace_args()
    unreadable = None if outcome.error else (outcome.unreadable or border.refusal(outcome.response))
    if unreadable is not None:
        return _settle_unreadable(c, ev, write, unreadable, args)
    if outcome.error:
        ev.status = EvidenceStatus.UNKNOWN if write and outcome.error in UNCERTAIN else EvidenceStatus.FAILED
        ev.error = outcome.error
        node.fp_sig, node.fp_count = None, 0
        env.put_evidence(ev)
        node.last_business = ev.id
        settled: Settlement | None = None
        if write and ev.status == EvidenceStatus.FAILED:
            settled = {"evidence": ev.id, "tool": c.tool, "status": EvidenceStatus.FAILED, "via": "call"}
        hint = ("the outcome is unknown; it will be verified before anything else" if ev.status == EvidenceStatus.UNKNOWN
                else "the call failed; you may retry later, ask the user, or fail")
        return CallResult(ok=False, error=outcome.error, message=outcome.message, next=hint, evidence=ev.id,
                          status=ev.status, args=args, effect=Effect.UNCERTAIN if ev.status == EvidenceStatus.UNKNOWN else None,
                          settled=settled)
    j = settle_success(env, ev, meta, outcome.response)
    node.last_business = ev.id
    if ev.business_ok:
        if node.fp_sig == c.sig:
            node.fp_count += 1
        else:
            node.fp_sig, node.fp_count = c.sig, 1
    else:
        node.fp_sig, node.fp_count = None, 0
    settled = {"evidence": ev.id, "tool": c.tool, "status": ev.status, "via": "call"} if write else None
    if not ev.business_ok:
        # §6.2 "取不到时": an absent, null or empty value (or a container) at the path is not found.
        code = j.error_code if j is not None and _found(j.error_code) else code_of(ErrorName.TOOL_BUSINESS_FAILED)
        msg = j.error_message if j is not None and _found(j.error_message, True) else _truncate(outcome.response)
        msg = msg if isinstance(msg, str) else _truncate(msg)
        return CallResult(ok=False, error=ErrorName.TOOL_BUSINESS_FAILED, code=code, message=msg, evidence=ev.id,
                          status=ev.status, business_ok=False, empty=ev.empty, data=outcome.response, args=args,
                          next="the business call failed: read the message, correct the request, ask the user or fail",
                          settled=settled)
    return CallResult(ok=True, evidence=ev.id, status=ev.status, business_ok=True, empty=ev.empty,
                      data=outcome.response, args=args, settled=settled)


def _settle_unreadable(c: Call, ev: Evidence, write: bool, why: str, args: Any) -> CallResult:
    """The tool answered something the runtime cannot keep (invalid Unicode, too deep, a number
    too long): the call did complete, so a write is settled, not left uncertain; its business
    verdict is a failure saying why."""
    env, node = c.env, c.node
    ev.status, ev.business_ok, ev.empty = EvidenceStatus.SUCCESS, False, None
    ev.response = {"unreadable": why}
    env.put_evidence(ev)
    node.last_business = ev.id
    node.fp_sig, node.fp_count = None, 0
    settled: Settlement | None = ({"evidence": ev.id, "tool": c.tool, "status": ev.status, "via": "call"}
                                  if write else None)
    return CallResult(ok=False, error=ErrorName.TOOL_BUSINESS_FAILED, code=code_of(ErrorName.TOOL_BUSINESS_FAILED),
                      message=f"the tool's answer cannot be read: {why}", evidence=ev.id, status=ev.status,
                      business_ok=False, args=args, settled=settled,
                      next="the answer was unreadable: do not assume the change was made; ask the user or fail")


def _found(value: Any, containers: bool = False) -> bool:
    """A §6.2 error value that was found: not null, not "" (a code must be a scalar; a message
    may be an object, shown as its JSON text)."""
    return value is not None and value != "" and (containers or not isinstance(value, (dict, list)))


def _truncate(value: Any, limit: int = 500) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"
