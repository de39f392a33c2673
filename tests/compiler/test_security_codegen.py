"""Injection safety of generated code: hostile text in every string field and path segment.

The IR is built directly (the front end would refuse some of these names): codegen must be safe on
its own. Each generated module must compile, import without side effects, keep every hostile
string as data, and have exactly the identifiers of the same contract with harmless strings.
"""
from __future__ import annotations

import ast
import builtins
import io
import math
import tokenize
import types
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.compiler import codegen, codegen_literals, ir
from skillc.runtime import support as rt

PAYLOADS = [
    'x")+__import__("builtins").setattr(__import__("builtins"),"PWNED",1)#',
    "x')+__import__('builtins').setattr(__import__('builtins'),'PWNED',1)#",
    "\n__import__('builtins').setattr(__import__('builtins'),'PWNED',1)\n",
    "\r\n__import__('os').system('x')",
    '"""\n__import__("builtins").setattr(__import__("builtins"),"PWNED",1)\n"""',
    "'''\nPWNED = 1\n'''",
    "back\\slash\\",
    "\\",
    "\\N{LATIN SMALL LETTER A}\\x41\\u0041",
    "{{ config }}{% raw %}{#",
    "}}; PWNED=1 #",
    "数字员工 ✓ \u202e\u2066 bidi \u2028 ls \u2029 ps \x85 nel \x0c ff \x0b vt \x00 nul",
    "\udcff lone surrogate",
    "",
]


def _part(name: str) -> ir.PathPart:
    return ir.PathPart(kind="key", name=name)


def _path(*names: str) -> ir.Path:
    return ir.Path(text=".".join(names), parts=[_part(n) for n in names])


def hostile_contract(s: str) -> tuple[ir.SkillProfile, ir.Contract]:
    """A contract with `s` in every string field and path segment (names made distinct)."""
    entity = ir.Entity(type=s + "e", id=s + "i", name=s + "n", scalar=s + "s")
    write = ir.ToolContract(
        name=s + "w",
        label=s,
        side_effect="WRITE",
        idempotency_key=[_path(s, "k")],
        args={
            s + "a1": ir.ArgContract(path=_path(s, "a1"), sources=["USER", "EVIDENCE", "NODE_OUTPUT", "SHARED", "SESSION", "PRIOR_TASK"],
                                     enum=[s, {s: [s, 1.5, None, True]}], label=s, missing=ir.Missing(action="FAIL", message=s)),
            s + "a2": ir.ArgContract(path=_path(s + "a2"), has_const=True, const={s: [s, {s: s}], "n": float("nan"), "i": float("-inf")}),
            s + "a3": ir.ArgContract(path=_path(s + "a3"), from_=ir.EvidenceRef(text=s, key=s, path=[_part(s)]), when="UNIQUE",
                                     missing=ir.Missing(action="CALL_TOOL", tool=s)),
            s + "a4": ir.ArgContract(path=ir.Path(text=s, parts=[_part(s + "l"), ir.PathPart(kind="each"), _part(s)]),
                                     from_=ir.InputsRef(text=s, path=[_part(s), ir.PathPart(kind="each"), _part(s)])),
            s + "a5": ir.ArgContract(path=_path(s + "a5"), from_=ir.PriorRef(text=s, entity_type=s, entity_id=s, attr=s)),
            s + "a6": ir.ArgContract(path=_path(s + "a6"), from_=ir.PlatformRef(text=s, field=s)),
            s + "a7": ir.ArgContract(path=_path(s + "a7"), from_=ir.SessionRef(text=s, path=[_part(s)]), when="UNIQUE"),
        },
        success=ir.Success(path=_path(s, "code"), op="IN", has_value=True, value=[s, 0]),
        error=ir.ErrorPaths(code=_path(s, "c"), message=_path(s, "m")),
        extracts=[ir.Extract(key=s, path=_path(s), fields=[s], entity=entity), ir.Extract(path=_path(s, "p"))],
        verify=ir.Verify(tool=s + "r", args={s: ir.VerifyArg(name=s, from_=ir.CallRef(text=s, path=[_part(s)])),
                                           s + "c": ir.VerifyArg(name=s + "c", has_const=True, const=s)}),
    )
    read = ir.ToolContract(name=s + "r", success=ir.Success(path=_path(s), op="EQ", has_value=True, value=s))
    contract = ir.Contract(
        target=s + "w",
        inputs={
            s + "1": ir.InputSpec(name=s + "1", from_=ir.SharedRef(text=s, path=[_part(s)]), provider=s),
            s + "2": ir.InputSpec(name=s + "2", from_=ir.BareRef(text=s, path=[_part(s)])),
            s + "3": ir.InputSpec(name=s + "3", from_=ir.EvidenceRef(text=s, key=s, path=[_part(s)])),
            s + "4": ir.InputSpec(name=s + "4"),
        },
        outputs={s: ir.OutputSpec(name=s, type="LIST", fields=[s], hint=s, entity=entity, sources=["EVIDENCE"], has_constant=True, constant=[s])},
        tools={write.name: write, read.name: read},
    )
    profile = ir.SkillProfile(skill_key=s, skill_name=s, semantic_desc=s, skill_manual=s, skill_contract=s, tool_names=[s + "w", s + "r"])
    return profile, contract


_KINDS = {"bind", "check", "judge", "extract", "verify_args", "MISSING", "PROVENANCE", "ENUM", "ALLOWED"}


def _names(source: str) -> list[str]:
    """The identifiers of `source`, with the parts codegen derives from contract names (tool,
    argument: `_<tool>__<arg>__<KIND>`) replaced by a placeholder; every identifier is ASCII."""
    out = []
    for t in tokenize.generate_tokens(io.StringIO(source).readline):
        if t.type != tokenize.NAME:
            continue
        assert t.string.isascii(), t.string
        if t.string.startswith("_") and "__" in t.string[1:]:
            out.append("__".join(p if p in _KINDS else "<name>" for p in t.string[1:].split("__")))
        else:
            out.append(t.string)
    return out


def _import(source: str) -> types.ModuleType:
    module = types.ModuleType("hostile")
    exec(compile(source, "<generated>", "exec"), module.__dict__)
    return module


class Ctx:
    """A BindContext that answers every question with the hostile string itself."""

    def __init__(self, s: str) -> None:
        self.s = s
        self.platform = {s: s}
        self.inputs = {s: [{s: s}]}
        self.outputs = {s: s}
        self.shared = {s: s}
        self.session = {s: [s]}

    def evidence_value(self, key: str, parts: tuple) -> Any:
        return [self.s] if key == self.s else rt.MISSING

    def prior(self, entity_type: str, entity_id: str | None, attr: str | None) -> Any:
        return self.s

    def upstream_output(self, parts: tuple) -> Any:
        return self.s

    def user_mentions(self, param: str, value: Any) -> bool:
        return False

    def evidence_has(self, value: Any) -> bool:
        return False

    def node_output_has(self, param: str, value: Any) -> bool:
        return False

    def shared_has(self, param: str, value: Any) -> bool:
        return False

    def session_has(self, param: str, value: Any) -> bool:
        return False

    def prior_has(self, value: Any, ref: tuple | None) -> bool:
        return value == self.s


@pytest.mark.parametrize("s", PAYLOADS, ids=range(len(PAYLOADS)))
def test_hostile_strings_stay_data(s: str) -> None:
    profile, contract = hostile_contract(s)
    source = codegen.generate_module(profile, contract)
    harmless = codegen.generate_module(*hostile_contract("x"))
    # Same identifiers, in the same order, as with a harmless string: nothing became code. (An
    # empty missing.tool is unset, §19, which legitimately changes the code: compare the rest.)
    if s:
        assert _names(source) == _names(harmless)
    for line in source.splitlines():
        if line.lstrip().startswith("#"):
            assert "__import__" not in line or "\\" in line or '"' in line or "'" in line
    module = _import(source)
    assert not hasattr(builtins, "PWNED")
    assert module.SKILL.key == s and module.SKILL.manual == s and module.SKILL.semantic_desc == s
    assert set(module.TOOLS) == {s + "w", s + "r"}
    w = module.TOOLS[s + "w"]
    assert w.label == s and w.verify_tool == s + "r" and w.idempotency_key == ((("k", s), ("k", "k")),)
    assert set(w.args) == {s + f"a{i}" for i in range(1, 8)}
    assert w.args[s + "a1"].parts == (("k", s), ("k", "a1"))
    c = w.args[s + "a2"]
    assert c.bound and set(module.INPUTS) == {s + "1", s + "2", s + "3", s + "4"}
    assert module.INPUTS[s + "1"].provider == s and module.INPUTS[s + "1"].share_key == (("k", s),)
    assert module.OUTPUTS[s].constant == [s] and module.OUTPUTS[s].entity == rt.EntitySpec(s + "e", s + "i", s + "n", s + "s")
    if not s:
        return  # an empty string is "no value" (§5.3): the value checks below do not apply
    # Run every decision: hostile data flows through as values.
    ctx = Ctx(s)
    args: dict[str, Any] = {s: {"a1": s}}
    bound = w.bind(args, ctx)
    const = args[s + "a2"]
    assert const[s] == [s, {s: s}] and math.isnan(const["n"]) and const["i"] == float("-inf")
    assert args[s + "a3"] == [s] and args[s + "a5"] == s and args[s + "a6"] == s
    assert args[s + "l"] == [{s: s}]
    result = w.check(args, bound, ctx)
    assert result.issue is None and result.provenance[s + "a1"] == "PRIOR_TASK"
    args[s]["a1"] = s + "?"  # not in the enum, and no source matches
    result = w.check(args, bound, ctx)
    assert result.issue == rt.ParamIssue("ASK_USER", s + "a1", "provenance", label=s)
    assert w.judge({s: {"code": s}}).business_ok is True
    failed = w.judge({s: {"code": 1, "c": s, "m": s}})
    assert failed == rt.Judgement(False, s, s)
    x = w.extract({s: {s: s, "id": 1, s + "i": 7}}, {})
    assert x.values[s] == {s: s, "id": 1, s + "i": 7} and x.entities[0]["type"] == s + "e"
    assert w.verify_args({s: [s]}) == {s: [s], s + "c": s}
    inputs: dict[str, Any] = {}
    module.bind_inputs(inputs, ctx)
    assert inputs[s + "1"] == s and inputs[s + "2"] == s


def test_deep_constants_go_through_json() -> None:
    deep: Any = "leaf"
    for _ in range(300):
        deep = [deep]
    code = codegen_literals.literal(deep)
    assert code.startswith("rt.json_value(")
    assert eval(code, {"rt": rt}) == deep  # noqa: S307 - evaluating the compiler's own literal


@pytest.mark.parametrize("value", [object(), {1, 2}, b"bytes", {("t",): 1}, type("S", (str,), {})("sub")])
def test_non_json_values_are_refused(value: Any) -> None:
    with pytest.raises(codegen_literals.UnsafeLiteral):
        codegen_literals.literal(value)


def test_comment_never_holds_a_line_break() -> None:
    for s in PAYLOADS:
        text = codegen_literals.comment(s)
        assert not any(ch in text for ch in "\r\n\x0b\x0c\x85\u2028\u2029")
        assert ast.literal_eval(text) == s


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_literal_round_trips(value: Any) -> None:
    code = codegen_literals.literal(value)
    assert ast.literal_eval(code) == value
    assert repr(ast.literal_eval(code)) == repr(value)  # same types, -0.0 and key order included


# ---------------------------------------------------------------- rules (docs/reference/rules.md)


def _cel_string(s: str) -> str:
    """`s` as a CEL string literal (quotes, backslashes and line breaks escaped)."""
    out = []
    for ch in s:
        if ch in "\\'\"":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(f"\\u{ord(ch):04x}" if not 0xD800 <= ord(ch) <= 0xDFFF else "?")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def _rule_contract(s: str) -> tuple[ir.SkillProfile, ir.Contract]:
    """A tool whose rules carry `s` in their name, message, texts, field names and tool names."""
    q = _cel_string(s)
    rules = [
        ir.Rule(name=s + "r1", message=s, lets=[ir.RuleLet(name="v", text=q)],
                when=f"args[{q}] != {q} || true", expr=f"v == {q} && latest[{q}][{q}] == {q} && {q}.size() >= 0"),
        ir.Rule(name=s + "r2", message=s + "\n" + s, expr=f"evidence[{q}].exists(x, x[{q}] == {q})"),
    ]
    tool = ir.ToolContract(name=s + "t", rules=rules)
    profile = ir.SkillProfile(skill_key=s, skill_contract=s, tool_names=[s + "t"])
    return profile, ir.Contract(tools={tool.name: tool})


class _Scope:
    """The rule scope of a hostile call: every name answers with the hostile string."""

    def __init__(self, s: str) -> None:
        from datetime import datetime, timezone

        self.args = {s: "other"}
        self.platform: dict[str, Any] = {}
        self.shared: dict[str, Any] = {}
        self.inputs: dict[str, Any] = {}
        self.now = datetime(2027, 1, 1, tzinfo=timezone.utc)
        self.s = s

    def evidence(self, tool: str) -> list[Any]:
        return [{self.s: self.s}] if tool == self.s else []

    def latest(self, tool: str) -> Any:
        return self.evidence(tool)[0]


@pytest.mark.parametrize("s", [p for p in PAYLOADS if "\udcff" not in p], ids=range(len(PAYLOADS) - 1))
def test_hostile_rule_text_stays_data(s: str) -> None:
    profile, contract = _rule_contract(s)
    source = codegen.generate_module(profile, contract)
    assert _names(source) == _names(codegen.generate_module(*_rule_contract("x")))
    for line in source.splitlines():
        if line.lstrip().startswith("#"):
            assert "__import__" not in line or "\\" in line or '"' in line or "'" in line
    module = _import(source)
    assert not hasattr(builtins, "PWNED")
    rules = module.TOOLS[s + "t"].rules
    assert [r.name for r in rules] == [s + "r1", s + "r2"] and rules[1].message == s + "\n" + s
    assert [r.check(_Scope(s)) for r in rules] == [True, True]


@pytest.mark.parametrize("let_name", ["x = 1; import os", "__import__('os')", "a\nb", "args"])
def test_a_let_name_that_is_not_an_identifier_is_refused_by_codegen(let_name: str) -> None:
    rule = ir.Rule(name="r", message="m", lets=[ir.RuleLet(name=let_name, text="1")], expr="true")
    tool = ir.ToolContract(name="t", rules=[rule])
    with pytest.raises(codegen_literals.UnsafeLiteral):
        codegen.generate_module(ir.SkillProfile(skill_key="k", tool_names=["t"]), ir.Contract(tools={"t": tool}))


@pytest.mark.parametrize("expr", ["__import__('os').system('x') == 0", "args.x.__class__() == 1", "exec('1') == 1"])
def test_python_in_a_rule_is_never_code(expr: str) -> None:
    """Python spelled in a rule is a CEL call of an unknown function: the front end refuses it
    (SC703) and codegen, given it directly, refuses to write it."""
    from skillc.compiler.rules_check import Checker, Env
    from skillc.compiler.rules_syntax import RuleError, parse_rule_expr

    try:
        node = parse_rule_expr(expr)
    except RuleError:
        return  # not even CEL
    checker = Checker(Env(), expr)
    checker.check(node)
    assert any(f.code == "SC703" for f in checker.findings)
    tool = ir.ToolContract(name="t", rules=[ir.Rule(name="r", message="m", expr=expr)])
    with pytest.raises(codegen_literals.UnsafeLiteral):
        codegen.generate_module(ir.SkillProfile(skill_key="k", tool_names=["t"]), ir.Contract(tools={"t": tool}))
