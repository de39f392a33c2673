"""The runtime half of rules (runtime/call/rules.py): what a rule's scope answers (evidence by tool,
newest first; latest; origin) and `judge`, which runs every rule and fails closed."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from skillc.runtime import cel
from skillc.runtime.call.rules import Scope, judge
from skillc.runtime.compiled.skillmeta import RuleMeta
from skillc.runtime.words.vocab import RuleStatus

NEW = {"user": "u1", "methods": [{"id": "gift_7", "kind": "gift_card", "balance": 40}, {"id": "card_1", "kind": "card"}]}
OLD = {"user": "u1", "methods": [{"id": "gift_7", "kind": "gift_card", "balance": 99}]}
KEYED = {"payment_methods": {"paypal_3": {"source": "paypal"}}}


def _scope(records: list[tuple[str, Any]], args: dict[str, Any] | None = None) -> Scope:
    reads = []

    def source() -> list[tuple[str, Any]]:
        reads.append(1)
        return records

    scope = Scope(args=args or {}, platform={}, shared={}, inputs={}, now=datetime(2027, 1, 1, tzinfo=timezone.utc),
                  records=source)
    scope.vars["reads"] = reads
    return scope


def test_evidence_is_by_tool_newest_first_and_read_once() -> None:
    scope = _scope([("get_user", NEW), ("get_order", {"id": "W1"}), ("get_user", OLD)])
    assert scope.evidence("get_user") == [NEW, OLD] and scope.latest("get_user") is NEW
    assert scope.evidence("get_order") == [{"id": "W1"}] and scope.evidence("none") == []
    assert scope.vars["reads"] == [1]  # the node's evidence is walked once per call, whatever the rules ask
    with pytest.raises(cel.Undecidable, match="call none first"):
        scope.latest("none")


def test_origin_is_the_nearest_object_holding_the_value_in_the_newest_record() -> None:
    scope = _scope([("get_user", NEW), ("get_user", OLD), ("get_profile", KEYED)])
    assert scope.origin("gift_7", "args.pm") == {"id": "gift_7", "kind": "gift_card", "balance": 40}
    assert scope.origin("card_1", "args.pm")["kind"] == "card"
    assert scope.origin("paypal_3", "args.pm") == {"source": "paypal"}  # kept under the value as a key
    with pytest.raises(cel.Undecidable, match="not found in any record"):
        scope.origin("made_up", "args.pm")
    with pytest.raises(cel.Undecidable, match="scalar"):
        scope.origin(["gift_7"], "args.pm")
    assert _scope([("t", {"n": 1, "x": {"n": True}})]).origin(True, "args.b") == {"n": True}  # true is not 1


def _rule(name: str, fn: Any) -> RuleMeta:
    return RuleMeta(name, fn, f"message of {name}")


def test_judge_runs_every_rule_and_fails_closed() -> None:
    def broken(r: Any) -> bool:
        return {}["x"]  # a bug, not a CEL error: still undecidable, never a crash

    rules = [_rule("holds", lambda r: True), _rule("false", lambda r: False), _rule("guarded", lambda r: cel.SKIPPED),
             _rule("missing", lambda r: r.latest("get_x")), _rule("broken", broken)]
    verdict = judge(rules, _scope([]))
    assert [o.status for o in verdict] == [RuleStatus.HELD, RuleStatus.VIOLATED, RuleStatus.SKIPPED,
                                           RuleStatus.UNDECIDABLE, RuleStatus.UNDECIDABLE]
    assert [o.rule.name for o in verdict.failed] == ["false", "missing", "broken"]
    assert [o.rule.name for o in verdict.held] == ["holds"]
    described = verdict.failed[1].describe()
    assert described == {"rule": "missing", "status": "undecidable", "message": "message of missing",
                         "undecidable": "latest.get_x: no successful get_x response in evidence yet: call get_x first"}
    assert "KeyError" in verdict.failed[2].why
