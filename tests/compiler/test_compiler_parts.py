"""Branches of the parts split out of long compiler functions (issue 10, item 8) that the
end-to-end tests (diff fixtures, explain CLI, codegen snapshots) do not reach."""
from __future__ import annotations

from skillc.compiler import ir
from skillc.compiler.codegen_views import _success_code
from skillc.compiler.diff import _compare_skill
from skillc.compiler.diff_read import SkillView
from skillc.compiler.explain import _success_line


def _kinds(old: SkillView | None, new: SkillView | None) -> list[str]:
    return [c.kind for c in _compare_skill("fx.doc", old, new)]


def test_a_skill_gone_from_the_new_side_is_removed() -> None:
    assert _kinds(SkillView("fx.doc", "ok"), None) == ["skill.removed"]


def test_a_rejected_skill_that_loads_again_says_only_that() -> None:
    old = SkillView("fx.doc", "rejected", errors=["SC101"])
    new = SkillView("fx.doc", "ok", meta={"tool_names": ["get"], "mode": "PLAN"}, tools={"get": {}})
    assert _kinds(old, new) == ["skill.loads"]


def test_a_skill_rejected_on_both_sides_has_nothing_to_compare() -> None:
    old = SkillView("fx.doc", "rejected", meta={"mode": "REACT"})
    new = SkillView("fx.doc", "rejected", meta={"mode": "PLAN"})
    assert _kinds(old, new) == []


def test_a_listed_tool_that_gains_a_contract_is_not_risky() -> None:
    meta = {"tool_names": ["get"]}
    tool = {"side_effect": "NONE", "confirm": False, "idempotency_key": [], "verify_tool": None, "verify_args": None,
            "success": None, "error": None, "extracts": {}, "label": None, "args": {}}
    changes = _compare_skill("fx.doc", SkillView("fx.doc", "ok", meta=meta), SkillView("fx.doc", "ok", meta=meta, tools={"get": tool}))
    assert [(c.kind, c.tool, c.risky) for c in changes] == [("tool.contract_added", "get", False)]


def test_a_success_rule_without_op_accepts_any_non_empty_response() -> None:
    rule = ir.Success()
    assert _success_code(rule) == "True"
    assert _success_code(None) is None
    assert _success_line(rule) == "  success: configured without op (no condition; an empty response still fails)"
    assert _success_line(None) == "  success: not configured (no business judgement)"
