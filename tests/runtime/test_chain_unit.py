"""Unit tests of the tool-call chain (runtime/call/chain.py), the write gate (runtime/call/gate.py) and the
BindContext (runtime/call/context.py), with real generated modules and a real Session over a scripted
gateway: spec §5.3-§5.5, §6, §13, §14.1, §14.2, §14.4.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from skillc.runtime import support as rt
from skillc.runtime.call.chain import run_chain
from skillc.runtime.outside.config import Settings
from skillc.runtime.call.context import NodeContext, upstream_order
from skillc.runtime.session import Runtime
from skillc.runtime.words.errors import code_of
from skillc.runtime.call.gate import approval_needed, approval_summary, idempotency_key, path_text
from skillc.runtime.seam.indexes import Indexes
from skillc.runtime.mcp.result import CallOutcome, ToolInfo
from skillc.runtime.seam.state import Evidence, FollowUp, NodeState, SessionState, TaskState
from skillc.runtime.store import Store
from skillc.runtime.turn_env import TurnEnv

# ---------------------------------------------------------------- harness

PLATFORM = {"userId": 7, "memberId": 70, "name": "alice", "organId": 9, "organName": "Acme",
            "organType": "COMPANY", "deptPath": "/1/9"}


def compile_skill(contract: dict[str, Any], tool_names: list[str], *, key: str = "u.skill") -> Any:
    """The generated validator module of one skill, compiled by the real compiler."""
    from skillc.compiler.build import compile_studio
    from skillc.compiler.sources import studio_from_mapping
    from skillc.runtime.compiled.loader import load_compiled

    studio = studio_from_mapping({
        "agents": [{"agent_code": "a", "agent_name": "A", "identity_desc": "i", "mission_desc": "m",
                    "boundary_desc": "b", "style_desc": "s", "principle_desc": "p", "status": "ACTIVE",
                    "skills": [key]}],
        "skills": [{"skill_key": key, "skill_name": "S", "semantic_desc": "d", "skill_manual": "m",
                    "status": "ACTIVE", "tools": tool_names, "contract": json.dumps(contract)}],
    }, origin="test")
    out = Path(tempfile.mkdtemp(prefix="chain-unit-"))
    compile_studio(studio, out)
    compiled = load_compiled(out)
    assert key in compiled.skills, compiled.rejected
    return compiled.skills[key]


def ok(response: Any) -> CallOutcome:
    """A tool that answered."""
    return CallOutcome(response, None, "")


def fault(name: str, message: str = "it broke") -> CallOutcome:
    """A call failure of §14.4, by its error name."""
    return CallOutcome(None, name, message)


@dataclass
class ScriptedGateway:
    """Tools answering from per-tool lists (the last answer repeats); records every real call."""

    answers: dict[str, list[CallOutcome]] = field(default_factory=dict)
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    on_call: Any = None

    @property
    def catalog(self) -> dict[str, ToolInfo]:
        return {n: ToolInfo(n, None, None, self.schemas.get(n, {"type": "object"}), "test")
                for n in set(self.answers) | set(self.schemas)}

    async def call(self, tool: str, args: dict[str, Any], *, timeout: float | None = None) -> CallOutcome:
        self.calls.append((tool, json.loads(json.dumps(args))))
        if self.on_call is not None:
            self.on_call(tool, args)
        seq = self.answers.get(tool) or [ok({})]
        return seq.pop(0) if len(seq) > 1 else seq[0]

    def count(self, tool: str) -> int:
        return sum(1 for t, _ in self.calls if t == tool)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def open_session(module: Any, gateway: ScriptedGateway, tmp: Path, *, config: dict[str, Any] | None = None,
                 user_messages: tuple[str, ...] = ()) -> tuple[TurnEnv, NodeState]:
    """A real session's env with task t1 and one running node n1 of `module`'s skill."""
    studio = SimpleNamespace(skills={module.SKILL.key: module}, agents={}, rejected={})
    runtime = Runtime(studio, gateway, None, Store(tmp / "store.sqlite"), Settings.from_mapping(config or {}),
                      clock=Clock(), seed=1)
    session = asyncio.run(runtime.open_session(dict(PLATFORM), session_id="s1")).env
    task = TaskState(id="t1", session="s1", agent="a", message="m", turn=1)
    node = NodeState(id="n1", task="t1", skill=module.SKILL.key, state="RUNNING")
    task.nodes["n1"] = node
    task.order.append("n1")
    session.task = task
    session.session.turn = 1
    session.session.user_messages += [{"turn": 1, "text": t} for t in user_messages]
    return session, node


def call(session: TurnEnv, node: NodeState, tool: str, args: Any, *, approved: bool = False):
    return asyncio.run(run_chain(session, node, tool, args, approved=approved))


# One skill exercising the chain: a read, a bypassed write, a gated write, provenance tools.
CONTRACT = {
    "tools": {
        "r_read": {
            "args": {"q": {"sources": ["MODEL"]},
                     "secret": {"sources": ["MODEL"], "sensitive": True, "required": False},
                     "owner": {"from": "platform.userId"}},
            "success": {"path": "code", "op": "EQ", "value": 0},
            "error": {"code": "err", "message": "msg"},
            "extracts": [{"key": "recs", "path": "data.records", "entity": {"type": "rec"}},
                         {"key": "gone", "path": "data.nothing"}]},
        "w_write": {
            "sideEffect": "WRITE", "confirm": False, "idempotencyKey": ["b", "a"],
            "args": {"a": {"sources": ["MODEL"], "required": False},
                     "b": {"sources": ["MODEL"], "required": False}},
            "success": {"path": "code", "op": "EQ", "value": 0}},
        "w_gated": {
            "sideEffect": "WRITE",
            "args": {"title": {"sources": ["MODEL"], "label": "Title"},
                     "pin": {"sources": ["MODEL"], "sensitive": True, "label": "PIN", "required": False},
                     "org": {"from": "platform.organId", "label": "Organisation"},
                     "val": {"from": "session.v", "sources": ["MODEL"], "label": "Value", "required": False}},
            "success": {"path": "code", "op": "EQ", "value": 0}},
        "r_user": {"args": {"name": {"sources": ["USER"]}}},
        "r_ev": {"args": {"id": {"sources": ["EVIDENCE"]}}},
    }
}
TOOLS = ["r_read", "w_write", "w_gated", "r_user", "r_ev"]


@pytest.fixture(scope="module")
def module() -> Any:
    return compile_skill(CONTRACT, TOOLS)


@pytest.fixture
def gw() -> ScriptedGateway:
    return ScriptedGateway(answers={t: [ok({"code": 0})] for t in TOOLS + ["other"]},
                           schemas={"r_read": {"type": "object", "required": ["q", "owner"]}})


@pytest.fixture
def env(module: Any, gw: ScriptedGateway, tmp_path: Path) -> tuple[TurnEnv, NodeState]:
    return open_session(module, gw, tmp_path, config={"state.write-confirm-bypass-tools": ["w_write"]},
                        user_messages=("please look up Bob Smith",))


# ---------------------------------------------------------------- §13 step 1: ArgPolicy, catalog


def test_arg_json_invalid_and_not_an_object(env, gw) -> None:
    s, n = env
    r = call(s, n, "r_read", "{not json")
    assert (r.ok, r.error, r.code) == (False, "ARG_JSON_INVALID", code_of("ARG_JSON_INVALID"))
    r = call(s, n, "r_read", "[1, 2]")
    assert (r.error, r.code) == ("ARG_REJECTED", "agent_runtime.40032")
    r = call(s, n, "r_read", 5)
    assert r.error == "ARG_REJECTED"
    assert gw.calls == [] and s.evidence == {} and s.session.next_evidence == 1


def test_schema_required_missing_is_rejected_and_masked(env, gw) -> None:
    s, n = env
    r = call(s, n, "r_read", {"secret": "s3cr3t"})
    assert r.error == "ARG_REJECTED" and "q" in r.message and "owner" not in r.message
    assert r.args == {"secret": "***"}  # a refusal never puts a sensitive value in the trace
    assert gw.calls == [] and s.evidence == {}


def test_from_const_args_are_exempt_from_schema_required(env, gw) -> None:
    s, n = env
    r = call(s, n, "r_read", '{"q": "x"}')  # raw JSON text is accepted too
    assert r.ok and r.evidence == "e1"
    assert gw.calls == [("r_read", {"q": "x", "owner": 7})]


def test_catalog_denied(env, gw) -> None:
    s, n = env
    r = call(s, n, "other", {})
    assert (r.error, r.code) == ("CATALOG_DENIED", "agent_runtime.40027")
    assert gw.calls == [] and s.evidence == {}


# ---------------------------------------------------------------- §5.3 / §5.5 via the chain


def test_param_contract_refusals_register_no_evidence(env, gw) -> None:
    s, n = env
    r = call(s, n, "r_ev", {"id": 5})
    assert (r.error, r.code) == ("PARAM_PROVENANCE_REJECTED", "agent_runtime.40025")
    assert "builtin_node_follow_up" in r.next and "builtin_node_fail" in r.next
    r = call(s, n, "r_user", {"name": "Alice Jones"})
    assert r.error == "PARAM_PROVENANCE_ASK_USER" and "builtin_node_follow_up" in r.next
    r = call(s, n, "r_user", {})
    assert r.error == "PARAM_PROVENANCE_ASK_USER" and "missing" in r.message
    assert gw.calls == [] and s.evidence == {}
    r = call(s, n, "r_user", {"name": "bobsmith"})  # USER: normalised containment
    assert r.ok and r.evidence == "e1"


def test_expected_fields_of_the_answered_follow_up_make_user(env) -> None:
    s, n = env
    assert call(s, n, "r_user", {"name": "zz-top"}).error == "PARAM_PROVENANCE_ASK_USER"
    n.answered = FollowUp(question="Who?", expected_fields=["name"], answer="him", answered_turn=1)
    assert call(s, n, "r_user", {"name": "zz-top"}).ok


def test_evidence_source_needs_successful_extract_value(env, gw) -> None:
    s, n = env
    gw.answers["r_read"] = [ok({"code": 1, "data": {"records": [{"id": 5}]}}),
                            ok({"code": 0, "data": {"records": [{"id": 6}]}, "other": 5})]
    assert call(s, n, "r_read", {"q": "a"}).error == "TOOL_BUSINESS_FAILED"
    assert call(s, n, "r_ev", {"id": 5}).error == "PARAM_PROVENANCE_REJECTED"  # business-failed evidence
    assert call(s, n, "r_read", {"q": "b"}).ok
    assert call(s, n, "r_ev", {"id": 5}).error == "PARAM_PROVENANCE_REJECTED"  # outside the extract
    assert call(s, n, "r_ev", {"id": "6"}).error == "PARAM_PROVENANCE_REJECTED"  # exact: "6" is not 6
    assert call(s, n, "r_ev", {"id": 6}).ok


# ---------------------------------------------------------------- §13 steps 4 and 8: fingerprint


def test_fingerprint_trips_after_limit_identical_successes(env, gw) -> None:
    s, n = env
    for i in range(3):
        assert call(s, n, "r_read", {"q": "x"}).ok
    r = call(s, n, "r_read", {"q": "x"})
    assert (r.error, r.code, r.effect, r.evidence) == ("FINGERPRINT_TRIP", "agent_runtime.40026", "fail", None)
    assert gw.count("r_read") == 3 and len(s.evidence) == 3


def test_fingerprint_reset_by_another_call_and_by_failures(env, gw) -> None:
    s, n = env
    for _ in range(3):
        assert call(s, n, "r_read", {"q": "x"}).ok
    assert call(s, n, "r_read", {"q": "y"}).ok  # another call resets
    for _ in range(2):
        assert call(s, n, "r_read", {"q": "x"}).ok
    gw.answers["r_read"] = [ok({"code": 3}), ok({"code": 0})]
    assert call(s, n, "r_read", {"q": "x"}).error == "TOOL_BUSINESS_FAILED"  # not a success: resets
    for _ in range(3):
        assert call(s, n, "r_read", {"q": "x"}).ok
    assert call(s, n, "r_read", {"q": "x"}).error == "FINGERPRINT_TRIP"


def test_fingerprint_counts_bound_arguments(env) -> None:
    s, n = env
    for owner in (1, 2, 3):  # the model's owner is overwritten by platform.userId: same call
        assert call(s, n, "r_read", {"q": "x", "owner": owner}).ok
    assert call(s, n, "r_read", {"q": "x", "owner": 4}).error == "FINGERPRINT_TRIP"


# ---------------------------------------------------------------- §6 response contract, evidence


def test_business_failure_error_paths_and_defaults(env, gw) -> None:
    s, n = env
    gw.answers["r_read"] = [ok({"code": 4, "err": "E4", "msg": "nope"}), ok({"code": 4}), ok({})]
    r = call(s, n, "r_read", {"q": "a"})
    assert (r.ok, r.error, r.code, r.message, r.status, r.business_ok) == \
        (False, "TOOL_BUSINESS_FAILED", "E4", "nope", "SUCCESS", False)
    r = call(s, n, "r_read", {"q": "b"})
    assert r.code == "agent_runtime.40004" and json.loads(r.message) == {"code": 4}
    r = call(s, n, "r_read", {"q": "c"})  # empty response with success configured
    assert r.error == "TOOL_BUSINESS_FAILED" and r.business_ok is False
    assert [s.evidence[e].business_ok for e in ("e1", "e2", "e3")] == [False, False, False]


def test_no_success_configured_means_success(env, gw) -> None:
    s, n = env
    gw.answers["r_user"] = [ok({"code": 500, "error": "boom"})]
    r = call(s, n, "r_user", {"name": "bob"})
    assert r.ok and r.business_ok is True and r.status == "SUCCESS"


def test_evidence_values_and_entities(env, gw) -> None:
    s, n = env
    gw.answers["r_read"] = [ok({"code": 0, "data": {"records": [{"id": 1, "name": "one"}]}})]
    r = call(s, n, "r_read", {"q": "a"})
    ev = s.evidence[r.evidence]
    assert ev.values == {"recs": [{"id": 1, "name": "one"}]}  # the absent extract leaves no value
    assert [(e["type"], e["id"], e["name"]) for e in s.session.entities] == [("rec", 1, "one")]
    assert s.rt.store.evidence_of("s1") == []  # a read's evidence is written with the next unit of work
    asyncio.run(s.durable.commit())  # the turn's unit of work
    stored = {e.id: e for e in s.rt.store.evidence_of("s1")}
    assert stored["e1"].values == ev.values


# ---------------------------------------------------------------- §14.4 call failures


@pytest.mark.parametrize("name,write_status", [
    ("TOOL_TIMEOUT", "UNKNOWN"), ("TOOL_IO_ERROR", "UNKNOWN"), ("MCP_RPC_ERROR", "UNKNOWN"),
    ("TOOL_ERROR", "UNKNOWN"), ("TOOL_UNREACHABLE", "FAILED"), ("MCP_TOOL_ERROR", "FAILED"),
    ("MCP_INVALID_PARAMS", "FAILED"),
])
def test_call_failure_classes(env, gw, name: str, write_status: str) -> None:
    s, n = env
    gw.answers["r_read"] = [fault(name)]
    gw.answers["w_write"] = [fault(name)]
    r = call(s, n, "r_read", {"q": "a"})
    assert (r.ok, r.error, r.code, r.status, r.settled) == (False, name, code_of(name), "FAILED", None)
    w = call(s, n, "w_write", {"a": 1})
    assert (w.error, w.code, w.status) == (name, code_of(name), write_status)
    assert s.evidence[w.evidence].status == write_status
    if write_status == "FAILED":
        assert w.settled == {"evidence": w.evidence, "tool": "w_write", "status": "FAILED", "via": "call"}
    else:
        assert w.settled is None and w.effect == "uncertain"


def test_write_is_committed_started_before_the_call(env, gw) -> None:
    s, n = env
    seen: list[str] = []
    gw.on_call = lambda tool, args: seen.extend(
        r[0] for r in s.rt.store.raw("SELECT status FROM evidence WHERE id = 'e1'"))
    assert call(s, n, "w_write", {"a": 1}).ok
    assert seen == ["STARTED"]


# ---------------------------------------------------------------- §14.2 idempotency


def test_replay_returns_earlier_evidence_without_invoking(env, gw) -> None:
    s, n = env
    first = call(s, n, "w_write", {"a": 1, "b": 2, "c": "x"})
    again = call(s, n, "w_write", {"b": 2, "a": 1, "c": "other"})  # c is not in the key
    assert first.ok and first.settled["via"] == "call"
    assert (again.ok, again.replayed, again.evidence, again.settled) == (True, True, first.evidence, None)
    assert gw.count("w_write") == 1 and s.session.next_evidence == 2


@pytest.mark.parametrize("status,error", [("STARTED", "WRITE_IN_FLIGHT"), ("UNKNOWN", "WRITE_PENDING_VERIFY"),
                                          ("UNKNOWN_PRE_CALL", "WRITE_PENDING_VERIFY")])
def test_open_write_refuses_the_same_write(env, gw, status: str, error: str) -> None:
    s, n = env
    gw.answers["w_write"] = [fault("TOOL_TIMEOUT"), ok({"code": 0})]
    r = call(s, n, "w_write", {"a": 1})
    s.evidence[r.evidence].status = status
    again = call(s, n, "w_write", {"a": 1})
    assert (again.ok, again.error, again.code, again.evidence) == (False, error, code_of(error), None)
    assert gw.count("w_write") == 1
    assert call(s, n, "w_write", {"a": 2}).ok  # another key is another write


@pytest.mark.parametrize("first", [fault("TOOL_UNREACHABLE"), ok({"code": 9})])
def test_failed_or_business_failed_write_may_run_again(env, gw, first: CallOutcome) -> None:
    s, n = env
    gw.answers["w_write"] = [first, ok({"code": 0})]
    assert not call(s, n, "w_write", {"a": 1}).ok
    r = call(s, n, "w_write", {"a": 1})
    assert r.ok and not r.replayed and gw.count("w_write") == 2


def test_idempotency_key_rules(module) -> None:
    meta = module.TOOLS["w_write"]
    swapped = dataclasses.replace(meta, idempotency_key=tuple(reversed(meta.idempotency_key)))
    k = idempotency_key("w_write", meta, {"a": 1, "b": 2, "z": 0})
    assert k == idempotency_key("w_write", swapped, {"b": 2, "a": 1, "z": 9})  # path order, not listing order
    assert k.startswith("w_write:")
    assert idempotency_key("w_write", meta, {"a": 1}) == idempotency_key("w_write", meta, {"a": 1, "b": None, "z": 3})
    assert idempotency_key("w_write", meta, {"a": 1}) != idempotency_key("w_write", meta, {"b": 1})
    # none of the listed paths: the tool name + all arguments
    assert idempotency_key("w_write", meta, {"z": 1}) != idempotency_key("w_write", meta, {"z": 2})
    assert idempotency_key("w_write", meta, {"z": 1, "y": 2}) == idempotency_key("w_write", meta, {"y": 2, "z": 1})
    assert idempotency_key("w_write", meta, {"z": 1}) != idempotency_key("w_other", meta, {"z": 1})


# ---------------------------------------------------------------- §14.1 approval


def test_approval_needed_matrix(module) -> None:
    meta = module.TOOLS["w_gated"]
    listed = Settings.from_mapping({"state.write-confirm-bypass-tools": ["w_gated"]})
    assert approval_needed("w_gated", meta, Settings())
    assert approval_needed("w_gated", meta, listed)  # confirm true: the list alone does not bypass
    off = dataclasses.replace(meta, confirm=False)
    assert approval_needed("w_gated", off, Settings())  # confirm false alone does not bypass
    assert not approval_needed("w_gated", off, listed)
    assert not approval_needed("r_read", module.TOOLS["r_read"], listed)


def test_gate_records_bound_args_and_summary(env, gw) -> None:
    s, n = env
    r = call(s, n, "w_gated", {"title": "Spring", "pin": "4711", "org": 1, "extra": {"k": 1}})
    assert (r.error, r.code, r.evidence) == ("APPROVAL_REQUIRED", "agent_runtime.42221", None)
    assert "builtin_node_approval" in r.next
    assert r.args["pin"] == "***" and r.args["org"] == 9
    assert n.pending.args == {"title": "Spring", "pin": "4711", "org": 9, "extra": {"k": 1}}
    lines = n.pending.summary.splitlines()
    assert "Title: Spring" in lines and "PIN: ***" in lines and 'extra: {"k":1}' in lines
    assert "4711" not in n.pending.summary and "Organisation" not in n.pending.summary
    assert gw.calls == [] and s.evidence == {}


def test_confirmed_call_runs_once_without_gate_or_fingerprint(env, gw) -> None:
    s, n = env
    call(s, n, "w_gated", {"title": "Spring"})
    pending = n.pending
    r = call(s, n, pending.tool, pending.args, approved=True)
    assert r.ok and r.evidence == "e1" and gw.count("w_gated") == 1
    n.fp_sig, n.fp_count = "w_gated" + rt.canonical(pending.args), 99
    n.pending = None
    assert call(s, n, "w_gated", {"title": "Other"}, approved=True).ok  # approval and fingerprint skipped


def test_confirm_with_changed_summary_asks_again(env, gw) -> None:
    s, n = env
    call(s, n, "w_gated", {"title": "Spring", "val": "old"})
    first = n.pending
    assert "Value: old" in first.summary
    s.session.values["v"] = "bound-now"  # `from: session.v` now binds another value
    r = call(s, n, first.tool, first.args, approved=True)
    assert r.error == "APPROVAL_REQUIRED" and gw.count("w_gated") == 0
    assert n.pending is not first and "Value: bound-now" in n.pending.summary


def test_approval_summary_hides_nested_platform_args() -> None:
    meta = SimpleNamespace(args={
        "o.issuer": rt.ArgMeta(path="o.issuer", parts=(("k", "o"), ("k", "issuer")), platform=True, bound=True),
        "o.tax": rt.ArgMeta(path="o.tax", parts=(("k", "o"), ("k", "tax")), label="Tax", sensitive=True),
        "lines[].code": rt.ArgMeta(path="lines[].code", parts=(("k", "lines"), ("e",), ("k", "code")), label="Code"),
    })
    text = approval_summary(meta, {"o": {"issuer": 7, "tax": "T-9"}, "lines": [{"code": "A"}, {"code": "B"}], "n": 2})
    assert text.splitlines() == ["Tax: ***", "Code: A, B", "n: 2"]
    assert path_text((("k", "lines"), ("e",), ("k", "code"))) == "lines[].code"


# ---------------------------------------------------------------- runtime/call/context.py


def _ev(eid: str, node: str, values: dict, *, status: str = "SUCCESS", ok_: bool | None = True) -> Evidence:
    return Evidence(id=eid, task="t1", node=node, tool="x", args={}, status=status, business_ok=ok_, values=values)


def _graph_env() -> SimpleNamespace:
    sess = SessionState(id="s1", platform=dict(PLATFORM))
    task = TaskState(id="t1", session="s1", agent="a", message="m")
    for nid, deps in (("far", []), ("near", ["far"]), ("d1", []), ("me", ["near", "d1"])):
        task.nodes[nid] = NodeState(id=nid, task="t1", skill="k", deps=deps)
    env = SimpleNamespace(platform=sess.platform, task=task, session=sess, evidence={}, indexes=Indexes(), settings=Settings())
    for ev in (_ev("e1", "far", {"k": {"v": "far"}}), _ev("e2", "near", {"k": {"v": "near-old"}}),
               _ev("e3", "near", {"k": {"v": "near-new"}}), _ev("e4", "me", {"k": {"v": "failed"}}, ok_=False),
               _ev("e5", "me", {"k": {"v": "unknown"}}, status="UNKNOWN", ok_=None),
               _ev("e6", "d1", {"k": {"v": "delegate"}})):
        env.evidence[ev.id] = ev
        task.nodes[ev.node].evidence.append(ev.id)
    return env


def test_upstream_order_and_evidence_resolution() -> None:
    env = _graph_env()
    me = env.task.nodes["me"]
    assert [n.id for n in upstream_order(env.task.nodes, me)] == ["me", "d1", "near", "far"]
    ctx = NodeContext(env, me)
    assert [e.id for e in ctx.visible_evidence()] == ["e6", "e3", "e2", "e1"]
    assert ctx.evidence_value("k", (("k", "v"),)) == "delegate"
    assert ctx.evidence_value("nope", ()) is rt.MISSING
    assert ctx.evidence_has("far") and ctx.evidence_has("near-old")
    assert not ctx.evidence_has("failed") and not ctx.evidence_has("unknown")
    env.task.nodes["me"].evidence.append("e7")
    env.evidence["e7"] = _ev("e7", "me", {"k": {"v": "mine"}}, ok_=True)
    assert NodeContext(env, me).evidence_value("k", (("k", "v"),)) == "mine"  # this node first
    far = env.task.nodes["far"]
    assert [e.id for e in NodeContext(env, far).visible_evidence()] == ["e1"]  # nothing downstream


def test_the_view_by_tool_is_the_visible_evidence_grouped() -> None:
    """What a rule's scope reads (one pass, no generator) is visible_evidence's bodies, by tool."""
    env = _graph_env()
    for i, ev in enumerate(env.evidence.values()):
        ev.tool, ev.response = ("get_a", "get_b")[i % 2], {"id": ev.id}
    for nid in env.task.nodes:
        ctx = NodeContext(env, env.task.nodes[nid])
        visible = list(ctx.visible_evidence())
        by_tool: dict[str, list[Any]] = {}
        for ev in visible:
            by_tool.setdefault(ev.tool, []).append(ev.response)
        assert ctx.evidence_by_tool() == (by_tool, [ev.response for ev in visible]), nid
    assert NodeContext(env, env.task.nodes["me"]).evidence_by_tool()[1] == [{"id": i} for i in ("e6", "e3", "e2", "e1")]


def test_user_mentions_rules() -> None:
    sess = SessionState(id="s1", platform={}, user_messages=[{"turn": i, "text": f"msg {i}"} for i in range(20)])
    sess.user_messages.append({"turn": 21, "text": "Ｓｐｒｉｎｇ  Launch, 7 and x"})
    task = TaskState(id="t1", session="s1", agent="a", message="m")
    node = NodeState(id="n1", task="t1", skill="k")
    task.nodes["n1"] = node
    env = SimpleNamespace(platform={}, task=task, session=sess, evidence={}, indexes=Indexes(),
                          settings=Settings.from_mapping({}))
    ctx = NodeContext(env, node)
    assert ctx.user_mentions("t", "spring launch") and ctx.user_mentions("t", "SPRINGLAUNCH")
    # one character is said only as a number standing on its own (tests/runtime/test_usermatch.py has the rows)
    assert not ctx.user_mentions("t", "x") and ctx.user_mentions("t", 7) and not ctx.user_mentions("t", 5)
    assert ctx.user_mentions("t", "msg 15") and not ctx.user_mentions("t", "msg 5")  # last 10 only
    node.answered = FollowUp(question="q", expected_fields=["t"], answer="msg 20")
    assert ctx.user_mentions("t", "anything") and not ctx.user_mentions("u", "anything")
    env.settings = Settings.from_mapping({"provenance.follow-up-answer-must-contain": True})
    assert not ctx.user_mentions("t", "anything") and ctx.user_mentions("t", "Spring Launch")  # must be stated


def test_mapping_sources_and_prior() -> None:
    sess = SessionState(id="s1", platform={}, values={"region": "north"},
                        entities=[{"type": "art", "id": 17, "name": "Spring", "attrs": {"slug": "s-17"}},
                                  {"type": "art", "id": 18, "name": "Autumn", "attrs": {}}])
    task = TaskState(id="t1", session="s1", agent="a", message="m", shared={"o": {"codes": ["A", "B"]}})
    node = NodeState(id="n1", task="t1", skill="k", inputs={"lines": [{"code": "X"}]})
    task.nodes["n1"] = node
    ctx = NodeContext(SimpleNamespace(platform={}, task=task, session=sess, evidence={}, indexes=Indexes(), settings=Settings()), node)
    assert ctx.session_has("region", "north") and not ctx.session_has("region", "south")
    assert ctx.shared_has("o.codes", "B") and not ctx.shared_has("o.codes", "C")
    assert not ctx.shared_has("region", "north")
    assert ctx.node_output_has("lines[].code", "X") and not ctx.node_output_has("lines[].code", "Y")
    assert ctx.prior("art", None, "id") == 18 and ctx.prior("art", "17", "slug") == "s-17"
    assert ctx.prior("art", None, None) == "Autumn" and ctx.prior("nope", None, "id") is rt.MISSING
    assert ctx.prior_has(17, None) and not ctx.prior_has(99, None) and not ctx.prior_has(True, None)
    assert ctx.prior_has(18, ("art", None, "id")) and not ctx.prior_has(17, ("art", None, "id"))


# ---------------------------------------------------------------- scenarios: exactly one write.settled


def test_every_write_settles_exactly_once() -> None:
    """FORMAT runner rule: each write evidence that leaves STARTED/UNKNOWN gets one write.settled."""
    from skillc.scenario.runner import run_scenario

    root = Path(__file__).resolve().parents[1] / "scenarios" / "gate"
    for name in ("faults-write.yaml", "write-pending-verify.yaml", "idempotency.yaml"):
        result = asyncio.run(run_scenario(root / name))
        assert result.ok, name
        writes = {e["evidence"] for e in result.events if e["type"] == "tool.call" and e.get("evidence")
                  and not e.get("replayed") and e["tool"] in ("w_put", "art_create")}
        settled: dict[str, int] = {}
        for e in result.events:
            if e["type"] == "write.settled":
                settled[e["evidence"]] = settled.get(e["evidence"], 0) + 1
        assert writes and settled == {w: 1 for w in writes}, name
