"""Hypothesis: mutated contracts and random text get diagnostics, never an unexpected exception."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc.compiler import ir
from skillc.compiler.frontend import check_skill
from test_frontend_rules import BASE, TOOLS

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KEYS = ["mode", "delegatable", "target", "inputs", "outputs", "tools", "sideEffect", "confirm", "idempotencyKey", "args",
        "success", "error", "extracts", "verify", "from", "const", "when", "sources", "required", "enum", "missing",
        "action", "tool", "message", "path", "op", "value", "key", "fields", "entity", "type", "id", "name", "scalar",
        "provider", "share", "constant", "minItems", "hint", "art_create", "lines[].goodsCode", ""]
WORDS = ["", "WRITE", "NONE", "write", "USER", "MODEL", "EQ", "LIST", "platform.userId", "platform.passportId", "call.x",
         "evidence.a.0.b", "prior.t:1.a", "shared.", "x..y", "a[]", "art_create", "art_get", "\\", "\n", "é说"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(WORDS) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=5),
    max_leaves=30,
)


def _check(text: str) -> None:
    profile = ir.SkillProfile(skill_key="f.z", skill_contract=text, tool_names=TOOLS)
    contract, diags = check_skill(profile)
    assert all(d.code != "SC900" for d in diags), [d.message for d in diags if d.code == "SC900"]
    lines = text.split("\n")
    for d in diags:
        assert 1 <= d.line <= max(len(lines), 1) and d.column >= 1, d
    if contract is None:
        assert text.strip() == "" or any(d.severity == "error" for d in diags)


@SETTINGS
@given(st.text(max_size=200))
def test_random_text(text: str) -> None:
    _check(text)


@SETTINGS
@given(st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6))
def test_random_contract_shapes(doc: dict) -> None:
    _check(json.dumps(doc, ensure_ascii=False, indent=1))


@SETTINGS
@given(st.data())
def test_mutated_contract(data: st.DataObject) -> None:
    text = BASE
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(text)))
        op = data.draw(st.sampled_from(["delete", "insert", "replace"]))
        if op == "delete":
            text = text[:i] + text[i + data.draw(st.integers(1, 12)):]
        elif op == "insert":
            text = text[:i] + data.draw(st.sampled_from(['"', ",", "{", "}", "[", "]", ":", "/*", "//", "\\", "null", '"x"', "\n"])) + text[i:]
        else:
            text = text[:i] + data.draw(st.sampled_from(WORDS)) + text[i + 1:]
    _check(text)
