"""The compiled rule code's shortcuts (compiler/codegen_rules.py) decide exactly what CEL's general
operators decide: `==`/`!=` against a string literal and `in` a list of string literals become
Python's own operators, `map` and `filter` become comprehensions; and the runtime's cheap paths
(a decimal kept per double, a verdict with every rule held) give the same answers."""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from skillc.compiler.rules_eval import eval_expression, show
from skillc.runtime import cel
from skillc.runtime.call.rules import Scope, judge
from skillc.runtime.compiled.skillmeta import RuleMeta
from skillc.runtime.words.vocab import RuleStatus

# a value of every kind a rule can meet
KINDS: list[Any] = [None, True, False, 0, 1, -3, 0.0, 1.0, math.nan, math.inf, Decimal("1"), "", "a", "b", "A",
                    ["a"], [], {"a": 1}, {}, datetime(2027, 1, 1, tzinfo=timezone.utc), timedelta(seconds=1)]


@pytest.mark.parametrize("x", KINDS, ids=[repr(k) for k in KINDS])
def test_string_literal_comparisons_agree_with_cel_eq_and_in(x: Any) -> None:
    cases = [("x == 'a'", cel.eq(x, "a")), ("'a' == x", cel.eq("a", x)), ("x != 'a'", cel.ne(x, "a")),
             ("x in ['a', 'b']", cel.in_(x, ["a", "b"])), ("x in ['b']", cel.in_(x, ["b"]))]
    for text, expected in cases:
        got = eval_expression(text, {"x": x})
        assert got.ok and got.value is expected, (text, got)


def test_string_literal_comparisons_compile_to_python_operators() -> None:
    assert eval_expression("x == 'a'", {"x": "a"}).code == '(r.var("x") == "a")'
    assert eval_expression("x in ['a', 'b']", {"x": "a"}).code == '(r.var("x") in ["a", "b"])'
    # anything else keeps CEL's general operators: numbers meet across kinds, lists member by member
    assert eval_expression("x == 1", {"x": 1}).code == 'cel.eq(r.var("x"), 1)'
    assert eval_expression("x in ['a', 1]", {"x": 1}).code.startswith("cel.in_(")
    assert eval_expression("x in []", {"x": 1}).code.startswith("cel.in_(")


def test_map_and_filter_are_comprehensions_with_the_same_values_and_errors() -> None:
    mapped = eval_expression("[1, 2, 3].map(x, x * 10)")
    assert mapped.value == [10, 20, 30] and mapped.code.startswith("[cel.mul(v_x, 10) for v_x in cel.items(")
    assert eval_expression("{'a': 1, 'b': 2}.map(k, k)").value == ["a", "b"]  # a map's keys
    kept = eval_expression("[1, 2, 3].filter(x, x % 2 == 1)")
    assert kept.value == [1, 3] and " if cel.truth(" in kept.code
    assert "expected a bool" in eval_expression("xs.filter(x, x)", {"xs": [1, 2]}).message
    assert "not a list or map" in eval_expression("x.map(y, y)", {"x": 1}).message
    assert "not a list or map" in eval_expression("x.filter(y, true)", {"x": 1}).message
    # map with a condition judges every item's condition before mapping any (CEL's order): kept general
    both = eval_expression("[1, 0].map(x, x > 0, 10 / x)")
    assert both.value == [10] and both.code.startswith("cel.map_(")


def test_decimal_of_a_double_keeps_its_sign_and_digits_when_reused() -> None:
    assert show(eval_expression("decimal(x)", {"x": 0.0}).value) == 'decimal("0.0")'
    assert show(eval_expression("decimal(x)", {"x": -0.0}).value) == 'decimal("-0.0")'  # not the cached 0.0
    for v in (12.34, 12.34, -12.34, 1e-7):
        assert cel.to_decimal(v) == Decimal(repr(v)) and str(cel.to_decimal(v)) == str(Decimal(repr(v)))
    for bad in (math.nan, math.inf):
        with pytest.raises(cel.Undecidable):
            cel.to_decimal(bad)


def test_sum_of_one_kind_and_of_mixed_kinds() -> None:
    assert cel.sum_([Decimal("0.1"), Decimal("0.2")]) == Decimal("0.3")
    assert cel.sum_([0.5, 0.25]) == 0.75 and cel.sum_([]) == 0 and cel.sum_([1, 2]) == 3
    assert cel.sum_([1, Decimal("0.5")]) == Decimal("1.5") and cel.sum_([1, 0.5]) == 1.5
    with pytest.raises(cel.Undecidable, match="integer overflow"):
        cel.sum_([cel.INT64_MAX, 1])
    with pytest.raises(cel.Undecidable, match="not a number"):
        cel.sum_([Decimal(1), "2"])


class _View:
    """A node's view that counts how often it is walked."""

    platform: dict[str, Any] = {"userId": 7}
    shared: dict[str, Any] = {}
    inputs: dict[str, Any] = {}

    def __init__(self, records: list[tuple[str, Any]]) -> None:
        self.records = records
        self.walks = 0

    def evidence_by_tool(self) -> tuple[dict[str, list[Any]], list[Any]]:
        self.walks += 1
        by_tool: dict[str, list[Any]] = {}
        for tool, body in self.records:
            by_tool.setdefault(tool, []).append(body)
        return by_tool, [body for _, body in self.records]


def test_the_call_scope_walks_the_view_only_for_a_rule_that_reads_evidence_and_then_once() -> None:
    view = _View([("get_order", {"id": "W2"}), ("get_user", {"id": "u"}), ("get_order", {"id": "W1"})])
    scope = Scope.of_call(view, {"order_id": "W1"}, 0.0)  # type: ignore[arg-type]
    assert scope.args == {"order_id": "W1"} and scope.platform == {"userId": 7} and view.walks == 0
    assert scope.now == datetime(1970, 1, 1, tzinfo=timezone.utc) and view.walks == 0
    assert scope.evidence("get_order") == [{"id": "W2"}, {"id": "W1"}] and scope.latest("get_order") == {"id": "W2"}
    assert scope.evidence("none") == [] and scope.origin("u", "args.x") == {"id": "u"}
    assert view.walks == 1


def test_the_clock_is_read_only_for_a_rule_that_reads_now() -> None:
    reads: list[int] = []

    def clock() -> float:
        reads.append(1)
        return 86400.0

    scope = Scope.of_call(_View([]), {}, clock)  # type: ignore[arg-type]
    assert scope.args == {} and reads == []
    assert scope.now == datetime(1970, 1, 2, tzinfo=timezone.utc) and scope.now.day == 2 and reads == [1]


def _rule_function(expr: str, when: str | None = None) -> str:
    from skillc.compiler import codegen, ir

    rule = ir.Rule(name="r", message="m", expr=expr, when=when)
    source = codegen.generate_module(ir.SkillProfile(skill_key="k", tool_names=["t"]),
                                     ir.Contract(tools={"t": ir.ToolContract(name="t", rules=[rule])}))
    return source[source.index("def _t__rule__r"):].split("\n\n\n")[0]


def test_a_rule_that_always_yields_a_bool_returns_it_without_a_check() -> None:
    assert "cel.result" not in _rule_function("args.x == 'a' && args.y > 1")
    assert "cel.result" not in _rule_function("[1].exists(v, v == 1)")
    assert "cel.result(" in _rule_function("latest.t.flag")  # a field of a record: any value, checked
    assert "cel.result(" in _rule_function("args.x == 'a' ? latest.t.flag : false")
    guarded = _rule_function("true", when="args.x == 'a'")
    assert "cel.truth" not in guarded and "if not (" in guarded
    assert 'cel.truth(cel.select(r.args, "x", "args.x"), "when")' in _rule_function("true", when="args.x")


def test_a_verdict_with_every_rule_held_and_one_with_failures() -> None:
    rules = [RuleMeta("a", lambda r: True, "ma"), RuleMeta("b", lambda r: True, "mb")]
    held = judge(rules, Scope.of_call(_View([]), {}, 0.0))  # type: ignore[arg-type]
    assert held.all_held and held.failed == [] and [o.rule.name for o in held.held] == ["a", "b"]
    rules.append(RuleMeta("guarded", lambda r: cel.SKIPPED, "mg"))
    guarded = judge(rules, Scope.of_call(_View([]), {}, 0.0))  # type: ignore[arg-type]
    assert not guarded.all_held and guarded.failed == [] and len(guarded.held) == 2  # nothing refuses the call
    rules.append(RuleMeta("c", lambda r: r.latest("t"), "mc"))
    mixed = judge(rules, Scope.of_call(_View([]), {}, 0.0))  # type: ignore[arg-type]
    assert not mixed.all_held and [o.status for o in mixed] == [RuleStatus.HELD, RuleStatus.HELD,
                                                                RuleStatus.SKIPPED, RuleStatus.UNDECIDABLE]
    assert mixed.failed[0].why.startswith("latest.t: ")


def test_exact_decimals_compare_with_python_operators_and_the_same_values() -> None:
    code = eval_expression("sum(xs.map(x, decimal(x))) == decimal(t)", {"xs": [10, 44.5], "t": 54.5}).code
    assert code.startswith("(sum([cel.to_decimal(") and code.endswith(' == cel.to_decimal(r.var("t")))')
    for xs in ([], [10], [10, 44.5], [-0.0], [-0.0, 0.0], ["1.50", 2], [0.1] * 30, ["1e30", "1e-30"]):
        got = eval_expression("sum(xs.map(x, decimal(x)))", {"xs": xs})
        want = cel.sum_([cel.to_decimal(x) for x in xs])
        assert got.ok and type(got.value) is type(want) and str(got.value) == str(want), (xs, got)
    assert "cannot be decided" not in eval_expression("sum(xs.map(x, decimal(x)))", {"xs": [1]}).message
    for xs, t, want in (([10, 44.5], 54.5, True), ([], 0, True), ([], 0.5, False), ([0.1, 0.2], 0.3, True),
                        ([-0.0], 0, True), ([1], "1.0", True)):
        for text, expected in ((f"sum(xs.map(x, decimal(x))) == decimal(t)", want),
                               (f"sum(xs.map(x, decimal(x))) != decimal(t)", not want)):
            got = eval_expression(text, {"xs": xs, "t": t})
            assert got.ok and got.value is expected, (text, xs, t, got)
    assert "not a number" in eval_expression("decimal(x) == decimal(1)", {"x": None}).message
    # anything else keeps cel.eq: a decimal meets an int or a double by value there
    assert eval_expression("decimal(1) == 1").code.startswith("cel.eq(")


def test_decimals_order_as_cel_does_and_ints_keep_their_exponent() -> None:
    for a, b in (("1.5", "1.50"), ("2", "10"), ("-0", "0"), ("0.1", "0.10000000000000000000001")):
        x, y = Decimal(a), Decimal(b)
        assert [cel.lt(x, y), cel.le(x, y), cel.gt(x, y), cel.ge(x, y)] == [x < y, x <= y, x > y, x >= y]
    assert cel.lt(Decimal(1), 2) and cel.gt(Decimal("0.5"), 0.25)  # across kinds, the general path
    assert str(cel.to_decimal(10)) == "10" and str(cel.to_decimal(10.0)) == "10.0"  # one dict key, two decimals
    assert str(cel.to_decimal(10)) == "10" and cel.to_decimal(True if False else 7) == Decimal(7)


@pytest.mark.parametrize("kind", ["all", "exists"])
def test_all_and_exists_over_a_list_absorb_errors_as_cel_does_wherever_the_error_is(kind: str) -> None:
    from itertools import product

    from skillc.runtime.compiled.cel_logic import _quantified

    def pred(v: Any) -> Any:  # an item is its condition's value; "e" cannot be decided
        if v == "e":
            raise cel.Undecidable("x", "cannot be decided")
        return v

    fast, stop = (cel.all_, False) if kind == "all" else (cel.exists, True)
    for n in range(4):
        for items in product([True, False, "e", 1], repeat=n):
            def outcome(f: Any) -> Any:
                try:
                    return f(list(items), pred)
                except cel.Undecidable as exc:
                    return str(exc)
            assert outcome(fast) == outcome(lambda c, p: _quantified(c, p, stop, kind)), items


def _compiled_rule(expr: str) -> Any:
    """The compiled rule function of `expr` (codegen's statements, as in a skill's module)."""
    from skillc.compiler import ir
    from skillc.compiler.codegen_rules import plan_rule, rule_body

    source = "from skillc.runtime import cel\n\n\ndef rule(r):\n" + "\n".join(rule_body(plan_rule(
        ir.Rule(name="r", expr=expr, message="m")))) + "\n"
    space: dict[str, Any] = {}
    exec(compile(source, "<rule>", "exec"), space)  # noqa: S102 - generated from our own texts
    return space["rule"], source


def _outcome(fn: Any, scope: Any) -> Any:
    try:
        return fn(scope)
    except Exception as exc:  # what judge would report
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("expr", ["x > 0 && y == 'k'", "x > 0 || y == 'k'", "x > 0 && o.f == 1 && y == 'k'",
                                  "o.f == 1 || x > 0 || y != 'k'", "x / 0 == 1 && y == 'k'", "y == 'k' || x / 0 == 1"])
def test_a_rule_of_ands_or_ors_as_statements_decides_as_the_expression_does(expr: str) -> None:
    fn, source = _compiled_rule(expr)
    assert "    try:\n" in source and "    except cel.Undecidable:" in source
    general = eval_expression(expr, {"x": 1, "y": "k", "o": {}}).code  # the one-expression form
    for x in (1, 0, -1, "s", None):
        for y in ("k", "j", 3):
            for o in ({}, {"f": 1}, {"f": 2}, []):
                scope = Scope(args={}, platform={}, shared={}, inputs={}, now=datetime(2027, 1, 1, tzinfo=timezone.utc),
                              records=lambda: (), vars={"x": x, "y": y, "o": o})
                want = _outcome(lambda s: eval(general, {"cel": cel, "r": s}), scope)  # noqa: S307 - our own code
                assert _outcome(fn, scope) == want, (expr, x, y, o, source)


@pytest.mark.parametrize("expr", ["xs.exists(x, x > 0)", "xs.all(x, x > 0)", "xs.exists(x, x.f == 'k')",
                                  "xs.all(x, x.f == 'k')"])
def test_a_rule_of_all_or_exists_as_a_loop_decides_as_the_expression_does(expr: str) -> None:
    from itertools import product

    fn, source = _compiled_rule(expr)
    assert "        for v_x in cel.items(" in source and "    except cel.Undecidable:" in source
    general = eval_expression(expr, {"xs": []}).code
    values = [1, 0, "s", None, {"f": "k"}, {"f": "j"}, {}]
    for xs in [*([list(p) for n in range(3) for p in product(values, repeat=n)]), {"a": 1}, "s", None]:
        scope = Scope(args={}, platform={}, shared={}, inputs={}, now=datetime(2027, 1, 1, tzinfo=timezone.utc),
                      records=lambda: (), vars={"xs": xs})
        want = _outcome(lambda s: eval(general, {"cel": cel, "r": s}), scope)  # noqa: S307 - our own code
        assert _outcome(fn, scope) == want, (expr, xs, source)


FIELD_EXPRS = ["o.f == 1", "o.f.g == 'k'", "o.f", "has(o.f) && o.f > 0", "o.f == 1 ? o.g : false",
               "o.l.map(x, x.f).size() == 2", "o.l.filter(x, x.f == 1).size() > 0", "o.l.exists_one(x, x.f == 1)",
               "o.l.all(x, x.f > 0)", "o.l.exists(x, x.f == 'k' || x.g == 'k')", "o['f'] == 1 || o.g == true",
               "o.f + 1 > 1 && o.g == true", "o.l[0].f == 1", "o.f in [1, 2] || !o.g"]
FIELD_VALUES: list[Any] = [None, 1, "s", [], {}, {"f": 1}, {"f": 2, "g": True}, {"f": {"g": "k"}}, {"g": False},
                           {"f": 1, "g": "k"}, {"l": []}, {"l": [{"f": 1}]}, {"l": [{"f": 1}, {"f": 2}]},
                           {"l": [{"g": "k"}, {"f": 1}]}, {"l": [1, {"f": "k"}]}, {"l": [{"f": 0}, "x"]}, {"l": "s"},
                           {"l": {"a": 1}}]


@pytest.mark.parametrize("expr", FIELD_EXPRS)
def test_a_rule_reading_fields_by_subscript_first_decides_as_the_expression_does(expr: str) -> None:
    fn, source = _compiled_rule(expr)
    assert "    except (KeyError, TypeError):" in source and "cel.select(" in source
    general = eval_expression(expr, {"o": {}}).code
    for o in FIELD_VALUES:
        scope = Scope(args={}, platform={}, shared={}, inputs={}, now=datetime(2027, 1, 1, tzinfo=timezone.utc),
                      records=lambda: (), vars={"o": o})
        want = _outcome(lambda s: eval(general, {"cel": cel, "r": s}), scope)  # noqa: S307 - our own code
        if want is not None and not isinstance(want, bool):
            want = _outcome(lambda s: cel.result(eval(general, {"cel": cel, "r": s})), scope)  # noqa: S307
        assert _outcome(fn, scope) == want, (expr, o, source)


def test_a_rule_reading_no_field_has_one_form_only() -> None:
    assert "KeyError" not in _compiled_rule("latest.t == 1 && evidence.t.size() > 0")[1]


def test_a_rule_with_lets_and_a_guard_reading_fields_decides_as_its_parts_do() -> None:
    from skillc.compiler import ir
    from skillc.compiler.codegen_rules import plan_rule, rule_body

    rule = ir.Rule(name="r", lets=[ir.RuleLet(name="v", text="o.f")], when="o.g == true", expr="v == 1", message="m")
    source = "from skillc.runtime import cel\n\n\ndef rule(r):\n" + "\n".join(rule_body(plan_rule(rule))) + "\n"
    space: dict[str, Any] = {}
    exec(compile(source, "<rule>", "exec"), space)  # noqa: S102 - generated from our own texts
    guard, value = eval_expression("o.g == true", {"o": {}}).code, eval_expression("o.f == 1", {"o": {}}).code

    def reference(s: Any) -> Any:
        if not eval(guard, {"cel": cel, "r": s}):  # noqa: S307 - our own code
            return None
        return eval(value, {"cel": cel, "r": s})  # noqa: S307 - our own code

    for o in FIELD_VALUES:
        scope = Scope(args={}, platform={}, shared={}, inputs={}, now=datetime(2027, 1, 1, tzinfo=timezone.utc),
                      records=lambda: (), vars={"o": o})
        got, want = _outcome(space["rule"], scope), _outcome(reference, scope)
        if isinstance(want, str):  # the let is read first: its error may come before the guard's
            assert isinstance(got, str), (o, got, source)
        else:
            assert got == want, (o, source)


NUMBER_EXPRS = [f"{a} {op} {b}" for op in ("==", "!=", "<", "<=", ">", ">=")
                for a, b in (("o.f", "1"), ("1", "o.f"), ("o.f", "1.5"), ("0.0", "o.f"), ("o.f", "-1"))]
NUMBER_EXPRS += ["o.f > 0 && o.f <= 10", "o.l.map(x, x.f > 1).size() == 2", "[o.f > 1].map(x, x).size() == 1",
                 "o.l.filter(x, [x.f >= 1].exists(y, y)).size() > 0", "o.l.exists(x, x.f != 2)"]
NUMBER_VALUES: list[Any] = [{"f": k} for k in KINDS] + [
    {"f": 2**63 - 1}, {"f": -(2**63)}, {"f": 1.5}, {"f": -1}, {"f": Decimal("1.5")}, {}, None,
    {"l": [{"f": k} for k in KINDS]}, {"l": [{"f": 1}, {"f": 2}]}, {"l": [{"f": 2.0}, {"f": True}]}, {"l": [{}]}]


@pytest.mark.parametrize("expr", NUMBER_EXPRS)
def test_a_comparison_with_a_number_literal_checks_the_kind_first_and_decides_as_cel_does(expr: str) -> None:
    fn, source = _compiled_rule(expr)
    assert "if type(_v := " in source, source  # Python's operator when the value is of the literal's type
    general = eval_expression(expr, {"o": {}}).code
    assert "_v" not in general  # the general form keeps CEL's operators
    for o in NUMBER_VALUES:
        scope = Scope(args={}, platform={}, shared={}, inputs={}, now=datetime(2027, 1, 1, tzinfo=timezone.utc),
                      records=lambda: (), vars={"o": o})
        want = _outcome(lambda s: eval(general, {"cel": cel, "r": s}), scope)  # noqa: S307 - our own code
        if want is not None and not isinstance(want, bool):
            want = _outcome(lambda s: cel.result(eval(general, {"cel": cel, "r": s})), scope)  # noqa: S307
        got = _outcome(fn, scope)
        assert got == want and type(got) is type(want), (expr, o, source)


def test_a_tools_all_held_verdict_is_made_once_and_a_failing_call_gets_its_own() -> None:
    flag = {"ok": True}
    rules = (RuleMeta("a", lambda r: True, "ma"), RuleMeta("b", lambda r: flag["ok"], "mb"))
    first = judge(rules, Scope.of_call(_View([]), {}, 0.0))  # type: ignore[arg-type]
    again = judge(rules, Scope.of_call(_View([]), {}, 0.0))  # type: ignore[arg-type]
    assert again is first and first.all_held and [o.rule.name for o in again.held] == ["a", "b"]
    flag["ok"] = False
    failed = judge(rules, Scope.of_call(_View([]), {}, 0.0))  # type: ignore[arg-type]
    assert failed is not first and not failed.all_held and [o.rule.name for o in failed.failed] == ["b"]
    assert first.all_held and first.failed == []  # the shared verdict is untouched
    other = tuple(rules)[:1]
    assert judge(other, Scope.of_call(_View([]), {}, 0.0)) is not first  # type: ignore[arg-type]


def test_a_tool_whose_rules_once_all_held_is_still_judged_on_every_call() -> None:
    """Once a tool's rules have all held, the next call runs them on the quick path that returns
    the shared verdict; a call where one is false, skipped or undecidable gets its own verdict."""
    def second(r: Any) -> Any:
        x = r.args.get("x")
        if x == "boom":
            raise TypeError("broken rule")
        return cel.SKIPPED if x == "skip" else r.latest("t") if x == "missing" else x != "bad"

    rules = (RuleMeta("first", lambda r: True, "m1"), RuleMeta("second", second, "m2"))

    def verdict(x: str) -> Any:
        return judge(rules, Scope.of_call(_View([]), {"x": x}, 0.0))  # type: ignore[arg-type]

    shared = verdict("ok")
    assert shared.all_held and verdict("ok") is shared
    bad = verdict("bad")
    assert bad is not shared and [o.status for o in bad] == [RuleStatus.HELD, RuleStatus.VIOLATED]
    skipped = verdict("skip")
    assert not skipped.all_held and [o.status for o in skipped] == [RuleStatus.HELD, RuleStatus.SKIPPED]
    broken = verdict("boom")
    assert [o.status for o in broken] == [RuleStatus.HELD, RuleStatus.UNDECIDABLE]
    assert broken.failed[0].why == "TypeError: broken rule"
    missing = verdict("missing")
    assert missing.failed[0].why.startswith("latest.t: ")
    assert verdict("ok") is shared


def _general(expr: str) -> str:
    """The one-expression general form of `expr` (CEL's operators, cel.select): the reference."""
    return eval_expression(expr, {"o": {}, "p": {}}).code


def _agree(expr: str, scopes: list[Any]) -> str:
    """The compiled rule of `expr` decides on every scope what the general form decides: the
    same value, or the same error naming the same thing. Returns the rule's source."""
    fn, source = _compiled_rule(expr)
    general = _general(expr)
    for scope in scopes:
        want = _outcome(lambda s: eval(general, {"cel": cel, "r": s}), scope)  # noqa: S307 - our own code
        if want is not None and not isinstance(want, bool) and not isinstance(want, str):
            want = _outcome(lambda s: cel.result(eval(general, {"cel": cel, "r": s})), scope)  # noqa: S307
        got = _outcome(fn, scope)
        assert got == want and type(got) is type(want), (expr, scope.vars, source)
    return source


def _scope(records: list[tuple[str, Any]] = (), **values: Any) -> Scope:  # type: ignore[assignment]
    return Scope(args=values.pop("args", {}), platform={}, shared={}, inputs={},
                 now=datetime(2027, 1, 1, tzinfo=timezone.utc), records=lambda: list(records), vars=values)


SAME_VALUES: list[Any] = [None, True, False, 0, 1, 1.0, 2**63 - 1, math.nan, Decimal("1"), "", "a", "A", ["a"], [1],
                          [1.0], {"a": 1}, {"a": 1.0}, {}, datetime(2027, 1, 1, tzinfo=timezone.utc),
                          timedelta(seconds=1)]


@pytest.mark.parametrize("expr", ["o.f == p.g", "o.f != p.g", "p.l.exists(x, x.f == o.f)", "o.f == p.g && o.f != 'z'",
                                  "[o.f == p.g].exists(b, b)", "(o.f == p.g) == (o.g == p.f)"])
def test_equality_of_two_values_is_pythons_for_one_plain_kind_and_cels_otherwise(expr: str) -> None:
    scopes = [_scope(o={"f": a, "g": b}, p={"g": b, "f": a, "l": [{"f": b}, {"f": a}]})
              for a in SAME_VALUES for b in SAME_VALUES]
    scopes += [_scope(o={}, p={"g": 1}), _scope(o={"f": 1}, p=[]), _scope(o=None, p=None)]
    source = _agree(expr, scopes)
    assert "cel.PLAIN_KINDS" in source, source


def test_a_nested_equality_keeps_the_cel_operator_where_a_walrus_would_be_overwritten() -> None:
    source = _compiled_rule("(o.f == p.g) == (o.g == p.f)")[1]
    fast = source.split("except (KeyError")[0]
    assert fast.count("cel.PLAIN_KINDS") == 2 and "cel.eq(" in fast  # the inner two inline, the outer CEL's


RECORDS: list[list[tuple[str, Any]]] = [
    [], [("t", None)], [("t", [])], [("t", {})], [("t", "s")], [("t", {"a": 1, "b": 1})], [("t", {"a": 1, "b": 2})],
    [("t", {"a": "x", "b": "x", "items": [], "total": 0})], [("u", {"a": 1}), ("t", {"a": 2, "b": 2})],
    [("t", {"a": 1, "b": 1}), ("t", {"a": 2, "b": 3})],
    [("t", {"id": "W1", "items": [{"price": 10}, {"price": 44.5}], "total": 54.5})],
    [("t", {"id": "W1", "items": [{"price": 10}, {"price": "x"}], "total": 10})],
    [("t", {"id": "W1", "items": [{"price": 10}, {}], "total": 10})],
    [("t", {"id": "W2", "items": {"k": 1}, "total": 0})]]


@pytest.mark.parametrize("expr", ["latest.t.a == latest.t.b", "latest.t.a + latest.t.b > 2", "latest.t.a == 1 || latest.t.b == 1",
                                  "has(latest.t.a) && latest.t.a == latest.t.b", "latest.t.a == args.x && latest.t.b == 1",
                                  "evidence.t.size() > 1 && evidence.t.exists(x, x.a == latest.t.b)",
                                  "evidence.t.exists(o, o.id == args.x)", "evidence.t.map(x, x.a).size() == evidence.t.size()",
                                  "evidence['t'].filter(x, x.a == 1).size() > 0 || latest.t.a == 2"])
def test_a_record_read_once_by_a_fast_form_decides_as_reading_it_each_time(expr: str) -> None:
    scopes = [_scope(recs, args=args) for recs in RECORDS for args in ({"x": "W1"}, {"x": 1}, {})]
    _agree(expr, scopes)


def test_a_record_read_once_is_read_into_a_local_and_evidence_is_iterated_as_a_list() -> None:
    source = _compiled_rule("latest.t.a == latest.t.b")[1]
    assert '    _latest1 = r.newest("t")\n' in source and '_latest1["a"]' in source
    assert source.count('r.latest("t")') == 2  # the general form reads it as written, naming what was missing
    loop = _compiled_rule("evidence.t.exists(o, o.id == args.x)")[1]
    assert '    for v_o in r.evidence("t"):' in loop and "cel.items(r.evidence" not in loop
    assert "_latest" not in _compiled_rule("latest.t.a == 1")[1]  # read once anyway: nothing to hoist
    assert "_latest" not in _compiled_rule("latest.t == latest.u")[1]  # no field read: no fast form


SUMS = ["sum(o.l.map(x, decimal(x.f))) == decimal(o.t)", "sum(o.l.map(x, decimal(x))) <= decimal(o.t)",
        "sum(o.l.map(x, decimal(x.f))) != decimal(o.t)", "sum(o.l.map(x, sum(x.m.map(y, decimal(y))))) == decimal(o.t)",
        "sum(latest.t.items.map(i, decimal(i.price))) == decimal(latest.t.total)"]
SUM_VALUES: list[Any] = [[], [{"f": 10}, {"f": 44.5}], [{"f": 0.1}, {"f": 0.2}], [{"f": -0.0}], [{"f": "1.50"}, {"f": 2}],
                         [{"f": "x"}], [{"f": 1}, {}], [{"f": 1}, 3], [1, 2.5], ["9e999999", "9e999999", "bad"],
                         ["9e999999", "9e999999"], [{"f": "9e999999"}, {"f": "9e999999"}, {"f": None}], [None],
                         {"a": 1}, "s", None, [{"m": [1, 2]}, {"m": []}], [{"m": "s"}]]


@pytest.mark.parametrize("expr", SUMS)
def test_a_sum_added_item_by_item_decides_as_the_sum_of_the_converted_list(expr: str) -> None:
    scopes = [_scope(RECORDS[-4] if "latest" in expr else [], o={"l": xs, "t": t})
              for xs in SUM_VALUES for t in (54.5, 0, 0.3, 3.5, "x", None)]
    scopes += [_scope(recs) for recs in RECORDS]
    source = _agree(expr, scopes)
    assert "    _sum = 0\n" in source and "ArithmeticError" in source, source


def test_a_sum_whose_variable_names_a_let_stays_a_comprehension() -> None:
    from skillc.compiler import ir
    from skillc.compiler.codegen_rules import plan_rule, rule_body

    rule = ir.Rule(name="r", lets=[ir.RuleLet(name="x", text="o.t")], expr="sum(o.l.map(x, decimal(x))) == decimal(x)",
                   message="m")
    source = "\n".join(rule_body(plan_rule(rule)))
    assert "_sum" not in source and "ArithmeticError" not in source
