"""The generated decision functions against the spec's tables (§5.3-§5.5, §6.1-§6.4, §7).

Every test compiles a small contract through the real front end and codegen, imports the module
and calls its functions: the generated code is what is tested.
"""
from __future__ import annotations

import json
import types
from dataclasses import dataclass, field
from typing import Any

import pytest

from skillc.compiler import ir
from skillc.compiler.codegen import generate_module
from skillc.compiler.frontend import check_skill
from skillc.runtime import support as rt


def compile_contract(contract: dict[str, Any], tool_names: list[str] | None = None) -> types.ModuleType:
    """Front end + codegen + import of one contract; fails the test on any front-end error."""
    text = json.dumps(contract, ensure_ascii=False)
    names = tool_names if tool_names is not None else sorted(contract.get("tools", {}))
    profile = ir.SkillProfile(skill_key="t.skill", skill_name="T", skill_contract=text, tool_names=names)
    parsed, diags = check_skill(profile)
    assert parsed is not None, [d.message for d in diags]
    module = types.ModuleType("generated_under_test")
    exec(compile(generate_module(profile, parsed), "<generated>", "exec"), module.__dict__)
    return module


@dataclass
class FakeCtx:
    """A BindContext whose answers come from plain data."""

    platform: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict)
    session: dict[str, Any] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)  # extract key -> subtree
    priors: dict[str, dict[str, Any]] = field(default_factory=dict)  # type -> attrs
    upstream: dict[str, Any] = field(default_factory=dict)
    said: tuple[str, ...] = ()
    evidence_values: tuple[Any, ...] = ()
    node_values: dict[str, Any] = field(default_factory=dict)
    shared_values: dict[str, Any] = field(default_factory=dict)
    session_values: dict[str, Any] = field(default_factory=dict)
    prior_ids: tuple[Any, ...] = ()

    def evidence_value(self, key: str, parts: tuple) -> Any:
        return rt.get_path(self.evidence[key], parts) if key in self.evidence else rt.MISSING

    def prior(self, entity_type: str, entity_id: str | None, attr: str | None) -> Any:
        ent = self.priors.get(entity_type)
        if ent is None:
            return rt.MISSING
        return ent.get(attr or "displayName", rt.MISSING)

    def upstream_output(self, parts: tuple) -> Any:
        return rt.get_path(self.upstream, parts)

    def user_mentions(self, param: str, value: Any) -> bool:
        return any(rt.normalize_text(value) in rt.normalize_text(s) for s in self.said)

    def evidence_has(self, value: Any) -> bool:
        return value in self.evidence_values

    def node_output_has(self, param: str, value: Any) -> bool:
        return self.node_values.get(param) == value

    def shared_has(self, param: str, value: Any) -> bool:
        return self.shared_values.get(param) == value

    def session_has(self, param: str, value: Any) -> bool:
        return self.session_values.get(param) == value

    def prior_has(self, value: Any, ref: tuple | None) -> bool:
        return value in self.prior_ids


def judge(success: dict[str, Any] | None, response: Any, error: dict[str, Any] | None = None) -> rt.Judgement:
    tool: dict[str, Any] = {}
    if success is not None:
        tool["success"] = success
    if error is not None:
        tool["error"] = error
    return compile_contract({"tools": {"t": tool}}).TOOLS["t"].judge(response)


# ---------------------------------------------------------------- §6.1 success ops


@pytest.mark.parametrize(
    ("op", "value", "actual", "ok"),
    [
        ("EQ", 200, "200", True),  # numeric when both convert
        ("EQ", "200", 200.0, True),
        ("EQ", 1, " 1 ", True),
        ("EQ", 200, "0200", True),
        ("EQ", "abc", "abc", True),
        ("EQ", "abc", "ABC", False),  # strings compare exactly
        ("EQ", 200, "OK", False),
        ("EQ", True, "true", True),  # bool is not a number: compared as text
        ("EQ", 1, True, False),
        ("NE", 200, "201", True),
        ("NE", 200, "200", False),
        ("IN", [200, "OK"], "200", True),
        ("IN", [200, "OK"], "OK", True),
        ("IN", [200, "OK"], 500, False),
        ("NOT_IN", ["FAIL", 500], "PUBLISHED", True),
        ("NOT_IN", ["FAIL", 500], "500", False),
    ],
)
def test_compare_ops(op: str, value: Any, actual: Any, ok: bool) -> None:
    assert judge({"path": "data.status", "op": op, "value": value}, {"data": {"status": actual}}).business_ok is ok


@pytest.mark.parametrize(
    ("actual", "ok"),
    [(None, False), (False, False), (0, False), (0.0, False), ("", False), ("0", False), ("false", False),
     ([], False), ({}, False), ("no", True), (1, True), (-1, True), ([0], True), ({"a": 0}, True), (True, True)],
)
def test_truthy(actual: Any, ok: bool) -> None:
    assert judge({"path": "data.x", "op": "TRUTHY"}, {"data": {"x": actual}, "k": 1}).business_ok is ok


def test_truthy_missing_path_fails() -> None:
    assert judge({"path": "data.x", "op": "TRUTHY"}, {"data": {}}).business_ok is False


@pytest.mark.parametrize(("response", "ok"), [({"data": {"x": None}}, True), ({"data": {"x": 0}}, True), ({"data": {}}, False)])
def test_exists(response: Any, ok: bool) -> None:
    assert judge({"path": "data.x", "op": "EXISTS"}, response).business_ok is ok


def test_missing_path_is_not_equal() -> None:
    assert judge({"path": "code", "op": "EQ", "value": 200}, {"other": 1}).business_ok is False
    assert judge({"path": "code", "op": "NE", "value": 200}, {"other": 1}).business_ok is True


@pytest.mark.parametrize("empty", [None, {}, [], ""])
def test_empty_response_fails_when_success_configured(empty: Any) -> None:
    assert judge({"path": "code", "op": "NE", "value": 500}, empty).business_ok is False
    assert judge(None, empty).business_ok is True  # no success: no business judgement


def test_list_path_and_index() -> None:
    assert judge({"path": "data.0.id", "op": "EQ", "value": 7}, {"data": [{"id": "7"}]}).business_ok is True


def test_error_paths_on_failure() -> None:
    j = judge({"path": "code", "op": "EQ", "value": 200}, {"code": 409, "msg": "dup"}, {"code": "code", "message": "msg"})
    assert j == rt.Judgement(False, 409, "dup")
    j = judge({"path": "code", "op": "EQ", "value": 200}, {"code": 409}, {"code": "err.code", "message": "msg"})
    assert j == rt.Judgement(False, None, None)
    assert judge({"path": "code", "op": "EQ", "value": 200}, {"code": 200}, {"code": "code"}) == rt.Judgement(True)


# ---------------------------------------------------------------- §5.3 / §5.5 parameter contract

PRIORITY_TOOL = {
    "tools": {
        "w": {
            "args": {
                "ask": {"sources": ["USER"]},
                "call": {"sources": ["EVIDENCE"], "missing": {"action": "CALL_TOOL", "tool": "q"}},
                "fail": {"sources": ["MODEL"], "missing": {"action": "FAIL", "message": "no fail value"}},
                "strict": {"sources": ["EVIDENCE"]},
                "free": {"sources": ["MODEL"], "missing": {"action": "CALL_TOOL"}},
                "opt": {"sources": ["USER"], "required": False, "label": "Optional"},
            }
        },
        "q": {},
    }
}


def _check(args: dict[str, Any], ctx: FakeCtx | None = None, contract: dict[str, Any] = PRIORITY_TOOL, tool: str = "w") -> rt.ParamResult:
    meta = compile_contract(contract).TOOLS[tool]
    ctx = ctx or FakeCtx()
    bound = meta.bind(args, ctx)
    return meta.check(args, bound, ctx)


def test_missing_actions_and_priority() -> None:
    full = {"ask": "x", "call": "y", "fail": "z", "strict": "s"}
    ctx = FakeCtx(said=("x",), evidence_values=("y", "s"))
    assert _check(dict(full), ctx).issue is None
    r = _check({k: v for k, v in full.items() if k != "ask"}, ctx)
    assert (r.issue.action, r.issue.param, r.issue.reason) == ("ASK_USER", "ask", "missing")
    r = _check({"fail": "z"}, ctx)  # ask + call missing: CALL_TOOL beats ASK_USER
    assert (r.issue.action, r.issue.tool) == ("CALL_TOOL", "q")
    r = _check({}, ctx)  # FAIL beats CALL_TOOL and ASK_USER
    assert (r.issue.action, r.issue.message) == ("FAIL", "no fail value")
    r = _check({"strict": "made-up"}, ctx)  # an immediate reject beats FAIL
    assert (r.issue.action, r.issue.param, r.issue.reason) == ("REJECT", "strict", "provenance")


def test_call_tool_without_tool_and_not_required_pass() -> None:
    r = _check({"ask": "x", "call": "y", "fail": "z", "strict": "s", "free": None, "opt": ""}, FakeCtx(said=("x",), evidence_values=("y", "s")))
    assert r.issue is None
    assert "free" not in r.provenance and "opt" not in r.provenance


def test_model_value_asks_when_user_allowed() -> None:
    r = _check({"ask": "never said", "call": "y", "fail": "z", "strict": "s"}, FakeCtx(evidence_values=("y", "s")))
    assert (r.issue.action, r.issue.param, r.issue.reason) == ("ASK_USER", "ask", "provenance")
    assert r.provenance["ask"] == "MODEL"


@pytest.mark.parametrize(
    ("source", "ctx", "matched"),
    [
        ("USER", FakeCtx(said=("please use Alpha",)), True),
        ("USER", FakeCtx(said=("nothing",)), False),
        ("EVIDENCE", FakeCtx(evidence_values=("alpha",)), True),
        ("NODE_OUTPUT", FakeCtx(node_values={"p": "alpha"}), True),
        ("SHARED", FakeCtx(shared_values={"p": "alpha"}), True),
        ("SESSION", FakeCtx(session_values={"p": "alpha"}), True),
        ("SESSION", FakeCtx(shared_values={"p": "alpha"}), False),
        ("PRIOR_TASK", FakeCtx(prior_ids=("alpha",)), True),
        ("PLATFORM", FakeCtx(platform={"p": "alpha"}), False),  # only through from
        ("CONTRACT", FakeCtx(), False),  # only through const
        ("MODEL", FakeCtx(), True),
    ],
)
def test_each_source_kind(source: str, ctx: FakeCtx, matched: bool) -> None:
    contract = {"tools": {"t": {"args": {"p": {"sources": [source]}}}}}
    r = _check({"p": "alpha"}, ctx, contract, "t")
    if matched:
        assert r.issue is None and r.provenance["p"] == source
    else:
        assert r.provenance["p"] == "MODEL" and r.issue.action in ("REJECT", "ASK_USER")


def test_sources_match_in_order() -> None:
    contract = {"tools": {"t": {"args": {"p": {"sources": ["SESSION", "EVIDENCE", "MODEL"]}}}}}
    both = FakeCtx(session_values={"p": 5}, evidence_values=(5,))
    assert _check({"p": 5}, both, contract, "t").provenance["p"] == "SESSION"
    assert _check({"p": 5}, FakeCtx(evidence_values=(5,)), contract, "t").provenance["p"] == "EVIDENCE"
    assert _check({"p": 6}, both, contract, "t").provenance == {"p": "MODEL"}


def test_empty_sources_reject_every_model_value() -> None:
    contract = {"tools": {"t": {"args": {"p": {}}}}}
    assert _check({"p": "x"}, FakeCtx(), contract, "t").issue.action == "REJECT"


def test_array_items_each_need_a_source() -> None:
    contract = {"tools": {"t": {"args": {"lines[].code": {"sources": ["EVIDENCE"]}}}}}
    ok = _check({"lines": [{"code": "a"}, {"code": "b"}]}, FakeCtx(evidence_values=("a", "b")), contract, "t")
    assert ok.issue is None
    bad = _check({"lines": [{"code": "a"}, {"code": "zz"}]}, FakeCtx(evidence_values=("a", "b")), contract, "t")
    assert bad.issue.action == "REJECT"
    hole = _check({"lines": [{"code": "a"}, {}]}, FakeCtx(evidence_values=("a",)), contract, "t")
    assert (hole.issue.action, hole.issue.reason) == ("ASK_USER", "missing")


def test_enum_exact_json_equality() -> None:
    contract = {"tools": {"t": {"args": {"p": {"sources": ["MODEL"], "enum": ["A", 1, True]}}}}}
    assert _check({"p": "A"}, FakeCtx(), contract, "t").issue is None
    assert _check({"p": 1}, FakeCtx(), contract, "t").issue is None
    for wrong in ("a", "1", 2, "true"):
        issue = _check({"p": wrong}, FakeCtx(), contract, "t").issue
        assert (issue.action, issue.reason) == ("ASK_USER", "enum"), wrong


# ---------------------------------------------------------------- §5.2 / §5.4 binding


@pytest.mark.parametrize(
    ("expr", "ctx", "source"),
    [
        ("inputs.space.id", FakeCtx(inputs={"space": {"id": 9}}), "NODE_OUTPUT"),
        ("outputs.spaceId", FakeCtx(outputs={"spaceId": 9}), "NODE_OUTPUT"),
        ("shared.spaceId", FakeCtx(shared={"spaceId": 9}), "SHARED"),
        ("session.spaceId", FakeCtx(session={"spaceId": 9}), "SESSION"),
        ("prior.space.id", FakeCtx(priors={"space": {"id": 9}}), "PRIOR_TASK"),
        ("platform.organId", FakeCtx(platform={"organId": 9}), "PLATFORM"),
        ("evidence.spaces.0.id", FakeCtx(evidence={"spaces": [{"id": 9}]}), "EVIDENCE"),
    ],
)
def test_from_binding_overwrites_model_value(expr: str, ctx: FakeCtx, source: str) -> None:
    meta = compile_contract({"tools": {"t": {"args": {"spaceId": {"from": expr}}}}}).TOOLS["t"]
    args = {"spaceId": 1}
    bound = meta.bind(args, ctx)
    assert args == {"spaceId": 9} and bound == {"spaceId": source}
    assert meta.check(args, bound, ctx) == rt.ParamResult({"spaceId": source}, None)
    # nothing found: the model's value stays and counts as MODEL (rejected without MODEL in sources)
    args = {"spaceId": 1}
    empty = FakeCtx()
    bound = meta.bind(args, empty)
    assert args == {"spaceId": 1} and bound == {}
    r = meta.check(args, bound, empty)
    assert r.provenance == {"spaceId": "MODEL"} and r.issue.action == "REJECT"


def test_from_with_model_and_user_fallbacks() -> None:
    contract = {"tools": {"t": {"args": {"a": {"from": "session.a", "sources": ["MODEL"]}, "b": {"from": "session.b", "sources": ["USER"]}}}}}
    r = _check({"a": 1, "b": 2}, FakeCtx(said=("2",)), contract, "t")
    assert r.provenance == {"a": "MODEL", "b": "MODEL"}
    assert (r.issue.action, r.issue.param, r.issue.reason) == ("ASK_USER", "b", "provenance")  # §5.3: asks again


def test_const_is_a_fresh_copy_every_call() -> None:
    meta = compile_contract({"tools": {"t": {"args": {"opts": {"const": {"tags": ["a"]}}}}}}).TOOLS["t"]
    first: dict[str, Any] = {"opts": "model"}
    assert meta.bind(first, FakeCtx()) == {"opts": "CONTRACT"}
    first["opts"]["tags"].append("mutated")
    second: dict[str, Any] = {}
    meta.bind(second, FakeCtx())
    assert second == {"opts": {"tags": ["a"]}}
    assert meta.check(second, {"opts": "CONTRACT"}, FakeCtx()).provenance == {"opts": "CONTRACT"}


def test_unique_evidence_both_ways() -> None:
    meta = compile_contract({"tools": {"t": {"args": {"ids": {"from": "evidence.found.id", "when": "UNIQUE"}}}}}).TOOLS["t"]
    args: dict[str, Any] = {}
    assert meta.bind(args, FakeCtx(evidence={"found": [{"id": 3}]})) == {"ids": "EVIDENCE"}
    assert args == {"ids": [3]}  # the one-item list itself is bound
    args = {}
    assert meta.bind(args, FakeCtx(evidence={"found": [{"id": 3}, {"id": 4}]})) == {}
    assert args == {}


def test_unique_path_both_ways() -> None:
    meta = compile_contract({"tools": {"t": {"args": {"code": {"from": "inputs.items[].code", "when": "UNIQUE"}}}}}).TOOLS["t"]
    args: dict[str, Any] = {}
    assert meta.bind(args, FakeCtx(inputs={"items": [{"code": "A"}]})) == {"code": "NODE_OUTPUT"}
    assert args == {"code": "A"}
    args = {"code": "model"}
    assert meta.bind(args, FakeCtx(inputs={"items": [{"code": "A"}, {"code": "B"}]})) == {}
    assert args == {"code": "model"}


def test_array_template_fills_only_missing_items() -> None:
    meta = compile_contract({"tools": {"t": {"args": {"lines[].code": {"from": "inputs.items[].code"}}}}}).TOOLS["t"]
    ctx = FakeCtx(inputs={"items": [{"code": "A"}, {"code": "B"}, {"code": "C"}]})
    args: dict[str, Any] = {"lines": [{"code": "x", "qty": 1}, {"qty": 2}]}
    # "x" stays the model's: the argument is not bound, so its provenance is still checked
    assert meta.bind(args, ctx) == {}
    assert args == {"lines": [{"code": "x", "qty": 1}, {"code": "B", "qty": 2}, {"code": "C"}]}
    same: dict[str, Any] = {"lines": [{"code": "A", "qty": 1}, {"qty": 2}]}
    assert meta.bind(same, ctx) == {"lines[].code": "NODE_OUTPUT"}  # the model's value is the template's
    extra: dict[str, Any] = {"lines": [{}, {}, {}, {"code": "Z"}]}
    assert meta.bind(extra, ctx) == {}  # an item beyond the template is the model's
    empty: dict[str, Any] = {}
    assert meta.bind(empty, ctx) == {"lines[].code": "NODE_OUTPUT"}
    assert empty == {"lines": [{"code": "A"}, {"code": "B"}, {"code": "C"}]}


# ---------------------------------------------------------------- §6.3 extraction


def test_extract_counts_values_and_empty() -> None:
    meta = compile_contract(
        {"tools": {"t": {"extracts": [{"key": "rows", "path": "data.records"}, {"key": "head", "path": "data.head", "fields": ["id", "name"]}, {"path": "data.total"}]}}}
    ).TOOLS["t"]
    x = meta.extract({"data": {"records": [{"id": 1}, {"id": 2}], "head": {"id": None, "name": "n"}, "total": 2}}, {})
    assert list(x.values) == ["rows", "head", "data.total"] and x.empty is False
    assert x.values["rows"] == [{"id": 1}, {"id": 2}]
    x = meta.extract({"data": {"records": [], "head": {"id": None, "name": ""}}}, {})
    assert x.empty is True
    x = meta.extract({"data": {"records": [], "head": {"id": 1}}}, {})
    assert x.empty is False  # one extract with content is enough


def test_extract_default_empty_without_extracts() -> None:
    meta = compile_contract({"tools": {"t": {}}}).TOOLS["t"]
    assert meta.extract({"data": []}, {}).empty is True
    assert meta.extract({"data": [1]}, {}).empty is False


def test_scalar_entities_and_write_merge() -> None:
    contract = {
        "tools": {
            "save": {
                "sideEffect": "WRITE",
                "success": {"path": "code", "op": "EQ", "value": 0},
                "extracts": [{"key": "saved", "path": "data", "entity": {"type": "article", "id": "id", "name": "title", "scalar": "id"}}],
            },
            "list": {"extracts": [{"key": "rows", "path": "data", "entity": {"type": "article", "name": "title"}}, {"key": "ids", "path": "ids", "entity": {"type": "tag"}}]},
        }
    }
    tools = compile_contract(contract).TOOLS
    x = tools["save"].extract({"code": 0, "data": 42}, {"title": "Hello", "spaceId": 3})
    assert x.entities == ({"type": "article", "id": 42, "name": "Hello", "attrs": {"title": "Hello", "spaceId": 3, "id": 42}},)
    x = tools["save"].extract({"code": 0, "data": {"id": 42, "title": "Final"}}, {"title": "Draft"})
    assert x.entities[0]["name"] == "Final"  # the response wins over the request
    x = tools["list"].extract({"data": [{"id": 1, "title": "A"}, {"id": 2, "title": "B"}], "ids": [5, 6]}, {"title": "ignored"})
    assert [(e["id"], e["name"]) for e in x.entities] == [(1, "A"), (2, "B")]  # scalars without `scalar`: no entity


# ---------------------------------------------------------------- §6.4 verify, §7 inputs, metadata


def test_verify_args() -> None:
    base = {"sideEffect": "WRITE", "success": {"path": "code", "op": "EQ", "value": 0}}
    contract = {
        "tools": {
            "w1": {**base, "verify": {"tool": "get"}},
            "w2": {**base, "verify": {"tool": "get", "args": {"id": {"from": "call.article.id"}, "mode": {"const": "exact"}, "gone": {"from": "call.nope"}}}},
            "get": {"success": {"path": "data", "op": "TRUTHY"}},
        }
    }
    tools = compile_contract(contract).TOOLS
    call = {"article": {"id": 5, "tags": ["a"]}}
    whole = tools["w1"].verify_args(call)
    assert whole == call and whole is not call and whole["article"] is not call["article"]
    assert tools["w2"].verify_args(call) == {"id": 5, "mode": "exact"}
    assert tools["get"].verify_args is None and tools["w2"].verify_tool == "get"


def test_bind_inputs_each_prefix_fills_only_missing() -> None:
    contract = {
        "inputs": {
            "a": {"from": "session.space.id"},
            "b": {"from": "shared.b"},
            "c": {"from": "outputs.c"},
            "d": {"from": "prior.article"},
            "e": {"from": "prior.article.id"},
            "f": {"from": "platform.organId"},
            "g": {"from": "articleTitle"},
            "h": {},
            "i": {"from": "session.nothing", "required": False},
        },
        "tools": {},
    }
    m = compile_contract(contract)
    ctx = FakeCtx(
        session={"space": {"id": 1}},
        shared={"b": 2},
        upstream={"c": 3, "articleTitle": "T", "h": 8, "f": 5},
        priors={"article": {"displayName": "Doc", "id": 4}},
        platform={"organId": 6},
    )
    inputs: dict[str, Any] = {"b": "kept"}
    got = m.bind_inputs(inputs, ctx)
    # f: another prefix (platform.) reads the upstream output of the input's own name (§7)
    assert inputs == {"a": 1, "b": "kept", "c": 3, "d": "Doc", "e": 4, "f": 5, "g": "T", "h": 8}
    assert got == {"a": "SESSION", "c": "NODE_OUTPUT", "d": "PRIOR_TASK", "e": "PRIOR_TASK", "f": "NODE_OUTPUT", "g": "NODE_OUTPUT", "h": "NODE_OUTPUT"}
    assert m.INPUTS["a"].prefix == "session" and m.INPUTS["a"].share_key == (("k", "space"), ("k", "id"))
    assert m.INPUTS["g"].prefix == "bare" and m.INPUTS["h"].prefix is None and m.INPUTS["i"].required is False


def test_metadata_records() -> None:
    contract = {
        "mode": "PLAN",
        "target": "w",
        "outputs": {"articleId": {"share": "SESSION", "entity": {"type": "article", "scalar": "id"}, "sources": ["EVIDENCE"]}},
        "tools": {
            "w": {
                "sideEffect": "WRITE",
                "label": "Write",
                "idempotencyKey": ["title", "lines[].code"],
                "success": {"path": "code", "op": "EQ", "value": 0},
                "args": {
                    "title": {"sources": ["USER"], "label": "Title", "sensitive": True},
                    "uid": {"from": "platform.userId"},
                    "lines[].code": {"sources": ["EVIDENCE"]},
                },
            },
            "a": {},
        },
    }
    m = compile_contract(contract, ["a", "w"])
    assert list(m.TOOLS) == ["a", "w"]
    w = m.TOOLS["w"]
    assert (w.side_effect, w.confirm, w.label) == ("WRITE", True, "Write")
    assert w.judge({"code": 0}).business_ok and not w.judge({"code": 1}).business_ok
    assert w.idempotency_key == ((("k", "title"),), (("k", "lines"), ("e",), ("k", "code")))
    assert w.args["title"] == rt.ArgMeta("title", (("k", "title"),), "Title", True, False, False, ("USER",), False)
    assert w.args["title"].expected_user
    assert w.args["uid"].bound and w.args["uid"].platform and not w.args["uid"].expected_user
    assert w.args["lines[].code"].expected_evidence
    assert m.TOOLS["a"].confirm is False and m.TOOLS["a"].judge is rt.judge_nothing and m.TOOLS["a"].bind is rt.bind_nothing
    assert (m.SKILL.key, m.SKILL.mode, m.SKILL.target, m.SKILL.tool_names) == ("t.skill", "PLAN", "w", ("a", "w"))
    o = m.OUTPUTS["articleId"]
    assert (o.share, o.entity, o.sources) == ("SESSION", rt.EntitySpec("article", "id", "name", "id"), ("EVIDENCE",))
