"""The rule language, construct by construct (docs/reference/rules.md): each case is compiled and
run exactly as a contract's rule is (`skillc.compiler.rules_eval`, the function behind
`skillc rules eval`), and its value, its compile error (code and place) or its undecidability
is checked. The cases are skillc's own; the public CEL conformance files are run by
tests/runtime/test_cel_conformance.py when present.
"""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

import pytest

from skillc.compiler.rules_eval import eval_expression, show

ORDER = {"id": "W1", "status": "pending", "total": 54.5, "placed_at": "2026-12-31T12:00:00Z",
         "items": [{"sku": "a", "price": 10, "qty": 2}, {"sku": "b", "price": 17.25, "qty": 2}]}
PROFILE = {"user": "u1", "payment_methods": {"gift_card_7": {"source": "gift_card", "balance": 40},
                                              "card_1": {"source": "credit_card", "id": "card_1", "brand": "visa"}},
           "passengers": [{"name": "Ann", "dob": "1990-04-01"}, {"name": "Bo", "dob": "2015-06-30"}]}
VARS: dict[str, Any] = {
    "args": {"order_id": "W1", "reason": "no longer needed", "qty": 3, "price": 2.5, "tags": ["x", "y"],
             "payments": [{"amount": 0.1}, {"amount": 0.2}], "payment_method_id": "gift_card_7", "dob": "2015-06-30",
             "note": None, "nested": {"a": {"b": 1}}},
    "platform": {"userId": 7, "organType": "COMPANY"},
    "shared": {"region": "EU"},
    "inputs": {"limit": 100},
    "now": "2027-01-01T00:00:00Z",
    "evidence": {"get_order": [ORDER, {"id": "W0", "status": "delivered"}], "get_profile": [PROFILE]},
}

# (expression, expected value); every construct of the reference table appears here.
VALUES: list[tuple[str, Any]] = [
    # literals
    ("42", 42), ("-7", -7), ("0x1F", 31), ("-9223372036854775808", -9223372036854775808), ("1.5", 1.5),
    ("2e3", 2000.0), (".5", 0.5), ("'it''s'", None), ("'a\\'b'", "a'b"), ('"tab\\there"', "tab\there"),
    ("'\\u00e9\\x41\\101'", "éAA"), ("r'\\d+'", "\\d+"), ("'''two\nlines'''", "two\nlines"), ("true", True),
    ("null", None), ("[1, 'a', null]", [1, "a", None]), ("[1, 2,]", [1, 2]), ("{'a': 1, 2: 'b'}", {"a": 1, 2: "b"}),
    # names
    ("args.order_id", "W1"), ("platform.userId", 7), ("shared.region", "EU"), ("inputs.limit", 100),
    ("now == timestamp('2027-01-01T00:00:00Z')", True), ("args.nested.a.b", 1), ("args['order_id']", "W1"),
    ("args.tags[1]", "y"), ("size(evidence.get_order)", 2), ("latest.get_order.id", "W1"),
    ("evidence['get_order'][1].status", "delivered"),
    ("evidence.get_order.filter(o, o.id == args.order_id).size()", 1),
    ("evidence.get_order.exists(o, o.status == 'delivered')", True),
    ("origin(args.payment_method_id).source", "gift_card"),
    ("origin(args.dob).name", "Bo"),
    # has, in, size
    ("has(args.note)", True), ("has(args.missing)", False), ("has(latest.get_order.items)", True),
    ("args.reason in ['no longer needed', 'ordered by mistake']", True), ("'x' in args.tags", True),
    ("'gift_card_7' in latest.get_profile.payment_methods", True), ("3 in [1.0, 3.0]", True),
    ("size('héllo')", 5), ("'abc'.size()", 3), ("size({'a': 1})", 1),
    # arithmetic
    ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("7 / 2", 3), ("-7 / 2", -3), ("-7 % 2", -1), ("7 % -2", 1),
    ("7.0 / 2.0", 3.5), ("1.0 / 0.0", math.inf), ("-(3)", -3), ("args.qty * args.price", 7.5),
    ("args.qty + 1", 4), ("'ab' + 'cd'", "abcd"), ("[1] + [2]", [1, 2]),
    # comparison
    ("1 == 1.0", True), ("1 < 1.5", True), ("'a' < 'b'", True), ("false < true", True), ("1 == 'a'", False),
    ("[1, 2] == [1, 2]", True), ("{'a': 1} == {'a': 1.0}", True), ("null == null", True), ("2 >= 2", True),
    ("2 != 3", True), ("3 <= 2", False),
    # logic
    ("true && false", False), ("false || true", True), ("!true", False), ("!!true", True),
    ("false && latest.nope.x", False), ("true || latest.nope.x", True), ("latest.nope.x && false", False),
    ("1 / 0 == 1 || true", True),
    # conditional
    ("args.qty > 2 ? 'many' : 'few'", "many"), ("false ? latest.nope.x : 1", 1),
    # macros
    ("[1, 2, 3].all(x, x > 0)", True), ("[1, 2, 3].exists(x, x == 2)", True), ("[1, 2, 3].exists_one(x, x > 1)", False),
    ("[1, 2, 3].filter(x, x % 2 == 1)", [1, 3]), ("[1, 2, 3].map(x, x * 10)", [10, 20, 30]),
    ("[1, 2, 3].map(x, x > 1, x * 10)", [20, 30]), ("{'a': 1, 'b': 2}.map(k, k)", ["a", "b"]),
    ("[0, -1].all(x, 1 / x > 0)", False), ("[0, 1].exists(x, 1 / x > 0)", True), ("[1, 0].exists(x, 1 / x == 1)", True),
    ("latest.get_order.items.all(i, i.qty > 0)", True),
    # time
    ("timestamp('2026-05-01T10:00:00+02:00') == timestamp('2026-05-01T08:00:00Z')", True),
    ("timestamp(0) == timestamp('1970-01-01T00:00:00Z')", True),
    ("now - timestamp(latest.get_order.placed_at) < duration('24h')", True),
    ("now - timestamp(latest.get_order.placed_at) == duration('12h')", True),
    ("timestamp('2027-01-01T00:00:00Z') + duration('1h30m') == timestamp('2027-01-01T01:30:00Z')", True),
    ("duration('1.5s') + duration('500ms') == duration('2s')", True), ("duration('-90m') < duration('0')", True),
    ("timestamp('2009-02-13T23:31:30Z').getFullYear()", 2009), ("timestamp('2009-02-13T23:31:30Z').getMonth()", 1),
    ("timestamp('2009-02-13T23:31:30Z').getDate()", 13), ("timestamp('2009-02-13T23:31:30Z').getDayOfMonth()", 12),
    ("timestamp('2009-02-13T23:31:30Z').getDayOfWeek()", 5), ("timestamp('2009-02-13T23:31:30Z').getDayOfYear()", 43),
    ("timestamp('2009-02-13T23:31:30Z').getHours('+01:00')", 0),
    ("timestamp('2009-02-13T23:31:30Z').getHours('America/New_York')", 18),
    ("timestamp('2009-02-13T23:31:30.125Z').getMilliseconds()", 125), ("duration('3h').getMinutes()", 180),
    ("int(timestamp('2009-02-13T23:31:30Z'))", 1234567890), ("string(duration('90s'))", "90s"),
    # strings
    ("'foobar'.startsWith('foo')", True), ("'foobar'.endsWith('bar')", True), ("'foobar'.contains('oba')", True),
    ("'a1b2'.matches('[0-9]')", True), ("matches('abc', '^b')", False), ("'ÀbC'.lowerAscii()", "Àbc"),
    ("'abc'.upperAscii()", "ABC"), ("'  x '.trim()", "x"),
    # conversions
    ("int('42')", 42), ("int(2.9)", 2), ("int(-2.9)", -2), ("double(3)", 3.0), ("string(12)", "12"),
    ("string(true)", "true"), ("bool('true')", True), ("dyn(3) == 3.0", True),
    # decimals, sum, min, max
    ("decimal(0.1) + decimal(0.2) == decimal('0.3')", True), ("0.1 + 0.2 == 0.3", False),
    ("sum(args.payments.map(p, decimal(p.amount))) == decimal('0.3')", True),
    ("decimal(latest.get_order.total) - decimal('4.5')", Decimal("50.0")),
    ("decimal('19.99') * 3", Decimal("59.97")), ("decimal(10) / 4", Decimal("2.5")),
    ("sum([1, 2, 3])", 6), ("sum([])", 0), ("sum([1, 2.5])", 3.5),
    ("sum(latest.get_order.items.map(i, i.price * i.qty)) == latest.get_order.total", True),
    ("min([3, 1, 2])", 1), ("max(['a', 'c', 'b'])", "c"), ("decimal('2.50') == 2.5", True),
    ("decimal('2.5') > 2", True),
]

# (expression, code of the compile error, the text under the caret)
COMPILE_ERRORS: list[tuple[str, str, str]] = [
    ("1 +", "SC701", ""), ("(1", "SC701", ""), ("'open", "SC701", "'"), ("a b", "SC701", "b"),
    ("1u == 1u", "SC702", "1u"), ("b'x' == b'x'", "SC702", "b'x'"), ("Msg{a: 1} == 1", "SC702", "Msg{a: 1}"),
    ("args.if == 1", "SC702", "if"),
    ("orders.size() > 0", "SC703", "orders"), ("evidence == 1", "SC703", "evidence"),
    ("platform.passportId == 1", "SC703", "platform.passportId"), ("platform.userid == 7", "SC703", "platform.userid"),
    ("type(1) == int", "SC703", "type(1)"), ("'a'.reverse() == 'a'", "SC703", "'a'.reverse()"),
    ("1 + 1.0 == 2.0", "SC704", "1 + 1.0"), ("'a' < 1", "SC704", "'a' < 1"), ("1 && true", "SC704", "1"),
    ("'a' - 'b' == ''", "SC704", "'a' - 'b'"), ("size(1) == 1", "SC704", "size(1)"),
    ("timestamp('yesterday') < now", "SC704", "'yesterday'"), ("duration('1 day') > duration('1h')", "SC704", "'1 day'"),
    ("decimal('ten') > 1", "SC704", "'ten'"), ("origin(latest.get_order.id).x == 1", "SC704", "latest.get_order.id"),
    ("1.5 % 1.0 == 0.5", "SC704", "1.5 % 1.0"), ("'abc'.startsWith(1)", "SC704", "1"), ("[1][0.5] == 1", "SC704", "0.5"),
    ("'x'.matches('(a)\\\\1')", "SC710", "'(a)\\\\1'"), ("'x'.matches('(?=a)')", "SC710", "'(?=a)'"),
    ("'x'.matches('(')", "SC710", "'('"), ("99999999999999999999 > 1", "SC701", "99999999999999999999"),
]

# (expression, a part of the undecidable message)
UNDECIDABLE: list[tuple[str, str]] = [
    ("latest.get_refund.amount > 0", "latest.get_refund: no successful get_refund response in evidence yet"),
    ("args.missing == 1", "args.missing: no such field"), ("args.tags[5] == 'x'", "index 5 out of range"),
    ("args.qty / 0 == 1", "division by zero"), ("9223372036854775807 + args.qty > 0", "integer overflow"),
    ("args.order_id > 1", "no operator > for string and int"), ("origin(args.reason).x == 1", "was not found in any record"),
    ("timestamp(args.order_id) < now", "is not an RFC 3339 timestamp"), ("{'a': 1, 'a': 2}.size() == 1", "repeated map key"),
    ("int(args.order_id) == 1", "is not an integer"), ("[1, 'a'].all(x, x > 0)", "no operator > for string and int"),
    ("min([]) == 1", "empty list"), ("args.reason.getHours() == 1", "is not a timestamp"),
    ("args.qty ? true : false", "expected a bool"),
]


@pytest.mark.parametrize("expr,expected", VALUES, ids=[v[0] for v in VALUES])
def test_value(expr: str, expected: Any) -> None:
    result = eval_expression(expr, VARS)
    if expr == "'it''s'":  # two adjacent literals are not CEL: a syntax error, not a concatenation
        assert result.error == "compile"
        return
    assert result.ok, (result.error, result.message)
    value = result.value
    if isinstance(expected, float) and math.isinf(expected):
        assert value == expected
    else:
        assert value == expected and type(value) is type(expected), show(value)


@pytest.mark.parametrize("expr,code,under", COMPILE_ERRORS, ids=[c[0] for c in COMPILE_ERRORS])
def test_compile_error_points_inside_the_text(expr: str, code: str, under: str) -> None:
    result = eval_expression(expr, VARS)
    assert result.error == "compile" and result.error_code == code, (result.error_code, result.message)
    if under:
        assert expr[result.start:result.end] == under, (result.start, result.end, result.message)
    else:
        assert result.start >= len(expr.rstrip()) - 1  # at (or just past) the end: something is missing


@pytest.mark.parametrize("expr,why", UNDECIDABLE, ids=[u[0] for u in UNDECIDABLE])
def test_undecidable_says_what_was_missing(expr: str, why: str) -> None:
    result = eval_expression(expr, VARS)
    assert result.error == "undecidable" and why in result.message, (result.error, result.message)


def test_values_print_as_cel_writes_them() -> None:
    assert show(eval_expression("timestamp('2027-01-01T01:30:00.5Z')").value) == 'timestamp("2027-01-01T01:30:00.5Z")'
    assert show(eval_expression("duration('1h')").value) == 'duration("3600s")'
    assert show(eval_expression("decimal('0.30')").value) == 'decimal("0.30")'
    assert show(eval_expression("['a', null, true, 1.5, {'k': 2}]").value) == '["a", null, true, 1.5, {"k": 2}]'


def test_a_match_is_linear_in_time() -> None:
    """A pattern backtracking engines take exponential time on is decided, not timed out: the
    verdict of a rule never depends on how loaded the machine is."""
    from skillc.runtime import cel

    started = datetime.now(timezone.utc)
    assert cel.matches("a" * 40 + "!", "^(a|aa)+$") is False
    assert cel.matches("a" * 4000, "^(a|aa)+$") is True
    assert datetime.now(timezone.utc) - started < timedelta(seconds=5)


def test_other_variables_are_names_of_the_expression() -> None:
    assert eval_expression("x + y", {"x": 1, "y": 2}).value == 3
    assert eval_expression("z > 0").error == "compile"


@pytest.mark.parametrize("text", [" && ".join(["true"] * 3000), "-" * 3000 + "1", "[" * 2000 + "]" * 2000,
                                  "args" + ".b" * 3000, "!" * 5000 + "true"], ids=["and", "neg", "list", "select", "not"])
def test_a_hostile_nesting_is_a_compile_error_not_a_crash(text: str) -> None:
    result = eval_expression(text, VARS)
    assert result.error == "compile" and result.error_code == "SC701", result.message


def test_parentheses_alone_do_not_nest() -> None:
    assert eval_expression("(" * 5000 + "1" + ")" * 5000).value == 1
