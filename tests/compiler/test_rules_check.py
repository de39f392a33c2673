"""Compile-time checks of a contract's `rules` (SC701–SC710, docs/diagnostics.md): each at the
contract's file:line:col with the caret inside the rule text, shapes inferred from the contract;
and what codegen makes of a checked rule (a readable function per rule, named after tool and
rule; a contract without rules keeps its module)."""
from __future__ import annotations

import json

import pytest

from skillc.compiler import codegen, ir
from skillc.compiler.diagnostics import Diagnostic, render
from skillc.compiler.frontend import check_skill


def _contract(rules: list[dict], *, tools: dict | None = None) -> str:
    body = {
        "target": "cancel_order",
        "inputs": {"limit": {"from": "shared.limit", "required": False}},
        "tools": {
            "get_order": {"args": {"order_id": {"sources": ["USER"]}},
                          "success": {"path": "code", "op": "EQ", "value": 0},
                          "extracts": [{"key": "order", "path": "data", "fields": ["id", "status"]}]},
            "cancel_order": {"sideEffect": "WRITE",
                             "args": {"order_id": {"sources": ["USER", "EVIDENCE"]},
                                      "reason": {"sources": ["USER"], "enum": ["no longer needed", "ordered by mistake"]},
                                      "lines[].sku": {"sources": ["USER"]}},
                             "success": {"path": "status", "op": "EQ", "value": "cancelled"},
                             "rules": rules},
            **(tools or {}),
        },
    }
    # one property per line, so a rule text sits on a line of its own
    return json.dumps(body, indent=2, ensure_ascii=False)


def _check(rules: list[dict], **kw: object) -> tuple[ir.Contract | None, list[Diagnostic], str]:
    text = _contract(rules, **kw)  # type: ignore[arg-type]
    profile = ir.SkillProfile(skill_key="shop.cancel", skill_contract=text, tool_names=["get_order", "cancel_order"])
    contract, diags = check_skill(profile)
    return contract, [d for d in diags if d.code.startswith("SC7")], text


def _rule(expr: str, **kw: object) -> dict:
    return {"name": "r", "expr": expr, "message": "m", **kw}


def _under(d: Diagnostic, text: str) -> str:
    """The contract text under the diagnostic's caret."""
    line = text.split("\n")[d.line - 1]
    return line[d.column - 1:d.end_column - 1]


@pytest.mark.parametrize("expr,code,under", [
    ("args.reason == 'no longer needed' &&", "SC701", '"'),
    ("args.qty == 1u", "SC702", "1u"),
    ("order.status == 'pending'", "SC703", "order"),
    ("args.reason == 'no longer needed' && platform.adminUser", "SC703", "platform.adminUser"),
    ("latest.get_order.code == 0 && size(args.reason) + 1.5 > 2.0", "SC704", "size(args.reason) + 1.5"),
    ("args.reason + 1 == 2", "SC704", "args.reason + 1"),
    ("size(args.lines) > 0 && args.lines.all(l, l.sku.startsWith(1))", "SC704", "1"),
    ("args.reason == 3", "SC705", "args.reason == 3"),
    ("latest.get_order.code == 'zero'", "SC705", "latest.get_order.code == 'zero'"),
    ("1 < 2", "SC705", "1 < 2"),
    ("args.order_id != '' || true", "SC705", "args.order_id != '' || true"),
    ("args.note == 'x'", "SC708", "args.note"),
    ("latest.get_ordr.status == 'pending'", "SC709", "latest.get_ordr"),
    ("args.order_id.matches('(?<=W)1')", "SC710", "'(?<=W)1'"),
    ("inputs.limt > 0", "SC703", "inputs.limt"),
])
def test_each_problem_points_inside_the_rule_text(expr: str, code: str, under: str) -> None:
    contract, diags, text = _check([_rule(expr)])
    found = [d for d in diags if d.code == code]
    assert found, [(d.code, d.message) for d in diags]
    d = found[0]
    if code != "SC701":
        assert _under(d, text) == under, render(d)
    assert d.line == next(i for i, line in enumerate(text.split("\n"), 1) if '"expr"' in line)
    assert (contract is None) == (d.severity == "error")


def test_the_caret_counts_json_escapes() -> None:
    # "\u00e9" is six characters of contract text for one of the rule: the caret still lands on `orderz`
    _, diags, text = _check([_rule("args.reason == '\u00e9' && orderz == 1")])
    assert "\\u00e9" in text or "é" in text
    d = next(d for d in diags if d.code == "SC703")
    assert _under(d, text) == "orderz"


def test_guard_that_never_applies_and_entry_shape() -> None:
    _, diags, _ = _check([_rule("args.reason != ''", when="1 > 2")])
    assert [d.code for d in diags] == ["SC706"]
    _, diags, _ = _check([{"name": "bad name", "expr": "true"}, {"name": "r", "message": "m"},
                          _rule("v", let={"args": "1"}), _rule("args.order_id != ''")])
    codes = [d.code for d in diags]
    assert codes.count("SC707") >= 4, [(d.code, d.message) for d in diags]  # name, message, expr, let name, duplicate


def test_lets_are_typed_in_order_and_the_guard_may_use_them() -> None:
    rule = _rule("o.status == 'pending' && n > 0", let={"o": "latest.get_order", "n": "size(o.items)"},
                 when="o.code == 0")
    contract, diags, _ = _check([rule])
    assert diags == [] and contract is not None
    _, diags, _ = _check([_rule("n > 0", let={"n": "m + 1", "m": "1"})])  # a later binding is not yet bound
    assert [d.code for d in diags] == ["SC703"]


def test_a_checked_rule_compiles_to_one_readable_function() -> None:
    rule = _rule("o.status == 'pending' && args.reason in ['no longer needed']", let={"o": "latest.get_order"},
                 when="args.reason != 'ordered by mistake'")
    rule["name"] = "cancel_only_pending"
    text = _contract([rule])
    profile = ir.SkillProfile(skill_key="shop.cancel", skill_contract=text, tool_names=["get_order", "cancel_order"])
    contract, diags = check_skill(profile)
    assert contract is not None
    source = codegen.generate_module(profile, contract)
    assert "from skillc.runtime import cel\n" in source
    block = source[source.index("# rule \"cancel_only_pending\""):source.index('TOOLS["cancel_order"]')]
    assert "def _cancel_order__rule__cancel_only_pending(r: Any) -> bool | None:" in block
    assert '#   when: "args.reason != \'ordered by mistake\'"' in block
    assert "    v_o = r.latest(\"get_order\")\n" in block
    assert "return cel.SKIPPED" in block and "return cel.and_(" in block  # a conjunction is a bool: no check
    assert all(len(line) <= 120 for line in block.splitlines()), max(block.splitlines(), key=len)
    meta = source[source.index("rt.RuleMeta("):]
    assert meta.startswith('rt.RuleMeta(\n            "cancel_only_pending",\n            _cancel_order__rule__cancel_only_pending,')
    assert "expr=\"o.status == 'pending' && args.reason in ['no longer needed']\"," in meta


def test_a_contract_without_rules_imports_nothing_new() -> None:
    text = _contract([])
    profile = ir.SkillProfile(skill_key="shop.cancel", skill_contract=text, tool_names=["get_order", "cancel_order"])
    contract, _ = check_skill(profile)
    assert contract is not None
    source = codegen.generate_module(profile, contract)
    assert "import cel" not in source and "rules=" not in source


def test_explain_tells_each_rule_in_words() -> None:
    from skillc.compiler.explain import explain

    rule = {"name": "cancel_only_pending", "let": {"o": "latest.get_order"}, "when": "args.reason != 'other'",
            "expr": "o.status == 'pending' && evidence.get_order.exists(x, x.id == args.order_id || has(x.ref))",
            "message": "Only a pending order can be cancelled."}
    text = _contract([rule])
    profile = ir.SkillProfile(skill_key="shop.cancel", skill_contract=text, tool_names=["get_order", "cancel_order"])
    contract, _ = check_skill(profile)
    assert contract is not None
    lines, _ = explain(profile, contract)
    body = "\n".join(lines)
    assert ("    rule cancel_only_pending: o.status is 'pending' and some x of the get_order responses has "
            "(x.id is args.order_id or x has ref)") in body
    assert "      applies only when args.reason is not 'other'" in body
    assert "      where o is the latest get_order response" in body
    assert "      else refused, telling the model: 'Only a pending order can be cancelled.'" in body
