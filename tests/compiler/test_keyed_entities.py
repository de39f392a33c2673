"""Entities of a map keyed by id (the `keyed` extension of §6.3's entity), through the generated
extract function: each member an entity whose id is its key."""
from __future__ import annotations

import json
import types

from skillc.compiler import ir
from skillc.compiler.codegen import generate_module
from skillc.compiler.frontend import check_skill


def _extract(entity: dict, response: object) -> list[dict]:
    contract = {"tools": {"profile": {"extracts": [{"key": "pm", "path": "payment_methods", "entity": entity}]}}}
    profile = ir.SkillProfile(skill_key="t.skill", skill_contract=json.dumps(contract), tool_names=["profile"])
    parsed, diags = check_skill(profile)
    assert parsed is not None, [d.message for d in diags]
    module = types.ModuleType("generated_under_test")
    exec(compile(generate_module(profile, parsed), "<generated>", "exec"), module.__dict__)
    return list(module.TOOLS["profile"].extract(response, {}).entities)


def test_each_member_is_an_entity_named_by_its_key() -> None:
    response = {"payment_methods": {"credit_card_7334": {"brand": "visa", "id": "stale", "extra": {"x": 1}},
                                    "gift_card_1": 150, "paypal_2": [1]}}
    got = _extract({"type": "payment_method", "keyed": True, "name": "brand", "scalar": "balance"}, response)
    assert got == [
        {"type": "payment_method", "id": "credit_card_7334", "name": "visa",
         "attrs": {"brand": "visa", "id": "credit_card_7334"}},
        {"type": "payment_method", "id": "gift_card_1", "name": None, "attrs": {"balance": 150, "id": "gift_card_1"}},
        {"type": "payment_method", "id": "paypal_2", "name": None, "attrs": {"id": "paypal_2"}},
    ]


def test_without_keyed_the_map_is_one_record_as_before() -> None:
    response = {"payment_methods": {"credit_card_7334": {"brand": "visa"}}}
    assert _extract({"type": "payment_method"}, response) == []  # no `id` field: no entity (§6.3)
    assert _extract({"type": "payment_method", "keyed": True}, {"payment_methods": [1, 2]}) == []  # not a map


def test_keyed_must_be_a_boolean() -> None:
    contract = {"tools": {"p": {"extracts": [{"key": "k", "path": "d", "entity": {"type": "t", "keyed": "yes"}}]}}}
    _, diags = check_skill(ir.SkillProfile(skill_key="t", skill_contract=json.dumps(contract), tool_names=["p"]))
    assert [d.code for d in diags if d.severity == "error"] == ["SC114"]
