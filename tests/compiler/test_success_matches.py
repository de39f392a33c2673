"""The MATCHES success operator (a skillc extension beside §6.1): patterns checked when the
contract is compiled (SC803 at the fault), judged in linear time, table-driven against Python's
own `re` on the patterns both accept."""
from __future__ import annotations

import json
import re
import time
import types

import pytest

from skillc.compiler import ir
from skillc.compiler.codegen import generate_module
from skillc.compiler.frontend import check_skill
from skillc.runtime.compiled.textpattern import compile_pattern, op_matches, pattern_problem

SEARCHES = [
    ("^Booking confirmed", "Booking confirmed: R1", True), ("confirmed$", "Booking confirmed", True),
    ("^confirmed", "Booking confirmed", False), ("(?i)error", "An ERROR happened", True),
    ("a{2,3}b", "xaab", True), ("a{2,3}b", "xab", False), ("a{2}", "a", False), ("[0-9]+ seats?", "3 seats", True),
    ("[^a-z]", "abc", False), ("colou?r", "color", True), ("(cat|dog)s", "dogs", True), ("(?:ab)+c", "ababc", True),
    (r"\d{3}-\d{4}", "call 555-1234", True), ("x*", "", True), ("^$", "", True), ("^$", "a", False),
    ("a|b", "c", False), (r"\.", "a.b", True), (r"\.", "ab", False), (r"[a\-z]", "-", True), ("[]a]", "]", True),
    (r"\w+@\w+", "mail me: a@b", True), (r"\s", "nospace", False), ("a.c", "a\nc", False), ("(?i)[a-c]", "B", True),
    ("a{,2}", "a{,2}", True), ("é", "café", True), ("a+?b", "aaab", True),
]


@pytest.mark.parametrize(("pattern", "text", "found"), SEARCHES)
def test_search_agrees_with_re(pattern: str, text: str, found: bool) -> None:
    assert compile_pattern(pattern).search(text) is found
    assert (re.search(pattern, text) is not None) is found


REFUSED = [
    ("(a", 1, "missing ')'"), ("a)", 2, "unbalanced ')'"), (r"(a)\1", 4, "backreferences"),
    ("(?=a)", 1, "lookaround"), ("(?<!a)b", 1, "lookaround"), ("(?P<x>a)", 1, "named"), ("(?>a)", 1, "atomic"),
    ("a++", 3, "possessive"), ("[a", 1, "missing ']'"), ("*a", 1, "quantifier"), ("a{5,2}", 2, "repeat counts"),
    ("a{101}", 2, "repeat counts"), (r"\q", 1, "unknown escape"), ("a(?i)", 2, "leading (?i)"), ("^*", 2, "quantifier"),
]


@pytest.mark.parametrize(("pattern", "column", "why"), REFUSED)
def test_refused_patterns_say_where_and_why(pattern: str, column: int, why: str) -> None:
    problem = pattern_problem(pattern)
    assert problem is not None and problem[1] == column and why in problem[0], problem


def test_no_catastrophic_backtracking() -> None:
    # Each of these takes exponential time in a backtracking engine on a text that almost matches.
    text = "a" * 3000 + "!"
    start = time.perf_counter()
    for pattern in ("(a+)+b", "(a|a)*b", "(a|aa)+$x", "(.*a){12}x", "^(a?){25}a{25}$"):
        assert compile_pattern(pattern).search(text) is False
    assert time.perf_counter() - start < 5.0  # linear: about a second on a loaded CI machine


def test_values_other_than_text() -> None:
    assert op_matches(200, "^2\\d\\d$") and op_matches(True, "^true$")
    assert not op_matches(None, ".*") and not op_matches({"a": 1}, ".*") and not op_matches("x", 3)


def _compile(success: dict) -> tuple[types.ModuleType | None, list]:
    contract = {"tools": {"book": {"success": success}}}
    text = json.dumps(contract, indent=2)
    profile = ir.SkillProfile(skill_key="t.skill", skill_contract=text, tool_names=["book"])
    parsed, diags = check_skill(profile)
    if parsed is None:
        return None, diags
    module = types.ModuleType("generated_under_test")
    exec(compile(generate_module(profile, parsed), "<generated>", "exec"), module.__dict__)
    return module, diags


def test_judged_by_the_generated_module() -> None:
    module, _ = _compile({"path": "text", "op": "MATCHES", "value": "^Booking (confirmed|updated)"})
    assert module is not None
    judge = module.TOOLS["book"].judge
    assert judge({"text": "Booking confirmed: R1"}).business_ok is True
    assert judge({"text": "Error: the flight is full"}).business_ok is False
    assert judge({"other": 1}).business_ok is False


def test_a_bad_pattern_is_an_error_at_its_column() -> None:
    module, diags = _compile({"path": "text", "op": "MATCHES", "value": "^ok(?=!)"})
    assert module is None
    (d,) = [d for d in diags if d.code == "SC803"]
    line = json.dumps({"tools": {"book": {"success": {"path": "text", "op": "MATCHES", "value": "^ok(?=!)"}}}},
                      indent=2).splitlines()[d.line - 1]
    assert line[d.column - 1:].startswith("(?=!)") and "lookaround" in d.message
    module, diags = _compile({"path": "text", "op": "MATCHES", "value": 3})
    assert module is None and any(d.code == "SC803" and "must be a pattern" in d.message for d in diags)
