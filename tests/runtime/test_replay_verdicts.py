"""`skillc replay` judges recorded calls with the runtime's own chain: each verdict the issue
names (an invented id refused, a write held for approval, an idempotent repeat, a parameter
contract refusal, a correct call allowed), the recorded answer judged as evidence, and the
pairing of answers (repeated ids, parallel calls)."""
from __future__ import annotations

import asyncio
from typing import Any

from helpers.transcripts import FOUND, VOID, VOIDED, answer, call, calls, judged, record, say, user

from skillc.runtime.replay import JudgeOptions, judge
from skillc.runtime.replay.openai_format import _conversation
from skillc.runtime.words.vocab import Pairing, Reading, Verdict


def test_an_invented_invoice_number_is_refused_and_later_verdicts_are_counterfactual(compiled_example: Any) -> None:
    r = judged(compiled_example, [
        user("Please void invoice INV-9, it was a duplicate"),
        call("a", "inv_invoice_void", VOID), answer("a", VOIDED),
        call("b", "inv_invoice_find", {"invoiceNo": "INV-9"}), answer("b", FOUND),
    ])
    first, second = r.calls
    assert first.verdict == Verdict.REFUSED and first.error == "PARAM_PROVENANCE_REJECTED"
    assert first.code == "agent_runtime.40025" and "Invoice (invoiceNo)" in first.message
    assert first.write and first.skill == "inv.invoice.void" and first.outcome is None
    assert r.counterfactual_from == 1 and not first.counterfactual and second.counterfactual
    assert second.verdict == Verdict.ALLOWED and second.outcome == {
        "evidence": "e1", "status": "SUCCESS", "business_ok": True, "empty": False}


def test_a_correct_lookup_is_allowed_and_its_answer_is_evidence_for_the_write(compiled_example: Any) -> None:
    r = judged(compiled_example, [
        user("Void invoice INV-9 please, reason: duplicate"),
        call("a", "inv_invoice_find", {"invoiceNo": "INV-9"}), answer("a", FOUND),
        say("Found INV-9 (issued). Shall I void it?"), user("yes"),
        call("b", "inv_invoice_void", VOID), answer("b", VOIDED),
    ])
    find, void = r.calls
    assert find.verdict == Verdict.ALLOWED and find.provenance == {"invoiceNo": "USER"}
    assert void.verdict == Verdict.APPROVAL_ASKED and void.error == "APPROVAL_REQUIRED"
    assert void.provenance is not None and void.provenance["invoiceNo"] == "EVIDENCE"
    assert void.confirmation is not None
    assert (void.confirmation.where, void.confirmation.text, void.confirmation.reading) == ("before", "yes", Reading.CONFIRMED)
    assert void.after_confirmation == {"evidence": "e2", "status": "SUCCESS", "business_ok": True, "empty": False}
    assert r.counterfactual_from is None and r.user_messages == 2 and r.text_replies == 1


def test_a_write_without_a_confirmation_is_reported_as_asked_and_not_taken_as_made(compiled_example: Any) -> None:
    r = judged(compiled_example, [
        user("Void invoice INV-9, duplicate"),
        call("a", "inv_invoice_find", {"invoiceNo": "INV-9"}), answer("a", FOUND),
        call("b", "inv_invoice_void", VOID), answer("b", VOIDED),
        user("hm, wait, which one was that?"),
        call("c", "inv_invoice_void", VOID), answer("c", VOIDED),
    ])
    void, again = r.calls[1:]
    assert void.verdict == Verdict.APPROVAL_ASKED and void.after_confirmation is None
    assert void.confirmation is not None and void.confirmation.where == "after"
    assert void.confirmation.reading == Reading.UNCLEAR  # "hm, wait" does not start with a yes
    assert void.confirmation.text == "hm, wait, which one was that?"
    assert r.counterfactual_from == 2 and again.counterfactual
    # the first void was never sent, so the second is no idempotent repeat: it is asked again
    assert again.verdict == Verdict.APPROVAL_ASKED


def test_an_idempotent_repeat_of_a_confirmed_write_is_replayed(compiled_example: Any) -> None:
    r = judged(compiled_example, [
        user("Void INV-9, it is a duplicate"),
        call("a", "inv_invoice_find", {"invoiceNo": "INV-9"}), answer("a", FOUND),
        say("Void INV-9?"), user("Yes, go ahead"),
        call("b", "inv_invoice_void", VOID), answer("b", VOIDED),
        call("c", "inv_invoice_void", VOID), answer("c", VOIDED),
    ])
    repeat = r.calls[2]
    assert repeat.verdict == Verdict.REPLAYED and repeat.error is None
    assert "nothing was sent again" in repeat.message
    assert r.counterfactual_from is None


def test_the_parameter_contract_refuses_a_value_outside_its_enum(compiled_example: Any) -> None:
    # a parameter-contract check (not the schema); rule refusals: test_replay_rules.py
    r = judged(compiled_example, [user("list my paid orders"),
                                  call("a", "inv_order_list", {"status": "PAID"}), answer("a", {"code": 0})])
    (only,) = r.calls
    assert only.verdict == Verdict.REFUSED and only.error == "PARAM_PROVENANCE_ASK_USER"
    assert "not one of the allowed values" in only.message and only.skill == "inv.order.lookup"


def test_the_recorded_answer_is_judged_by_the_contract(compiled_example: Any) -> None:
    r = judged(compiled_example, [user("find invoice INV-9"),
                                  call("a", "inv_invoice_find", {"invoiceNo": "INV-9"}),
                                  answer("a", {"code": 0, "data": {"total": 0, "records": []}})],
               skill="inv.invoice.query")
    (only,) = r.calls
    # inv.invoice.query's find takes an empty list as an answer
    assert only.skill == "inv.invoice.query" and only.verdict == Verdict.ALLOWED
    assert only.outcome is not None and only.outcome["business_ok"] is True and only.outcome["empty"] is True
    r = judged(compiled_example, [user("void invoice INV-9"),
                                  call("a", "inv_invoice_find", {"invoiceNo": "INV-9"}),
                                  answer("a", {"code": 0, "data": {"total": 0, "records": []}, "msg": "none"})],
               skill="inv.invoice.void")
    (only,) = r.calls
    # the void skill's find verifies writes: "nothing found" is a business failure there
    assert only.verdict == Verdict.ALLOWED and only.outcome is not None
    assert only.outcome["business_ok"] is False and only.outcome["error"] == "TOOL_BUSINESS_FAILED"


def test_a_tool_no_skill_of_the_agent_holds_is_refused_by_the_catalog(compiled_example: Any) -> None:
    r = judged(compiled_example, [user("delete everything"), call("a", "cms_article_create", {"title": "x"}),
                                  answer("a", {"ok": True})])
    (only,) = r.calls
    assert only.verdict == Verdict.REFUSED and only.error == "CATALOG_DENIED"


def test_repeated_call_ids_are_paired_by_position_and_said(compiled_example: Any) -> None:
    miss = {"code": 0, "data": {"total": 0, "records": []}}
    r = judged(compiled_example, [
        user("void INV-8 or INV-9, whichever is issued; duplicate"),
        call("call_0", "inv_invoice_find", {"invoiceNo": "INV-8"}), answer("call_0", miss),
        call("call_0", "inv_invoice_find", {"invoiceNo": "INV-9"}), answer("call_0", FOUND),
    ], skill="inv.invoice.void")
    first, second = r.calls
    assert first.pairing == second.pairing == Pairing.POSITION
    assert first.outcome is not None and first.outcome["business_ok"] is False
    assert second.outcome is not None and second.outcome["business_ok"] is True
    assert any("paired with calls by position" in n for n in r.notes)


def test_parallel_calls_are_judged_in_order_with_answers_paired_by_id(compiled_example: Any) -> None:
    miss = {"code": 0, "data": {"total": 0, "records": []}}
    r = judged(compiled_example, [
        user("is INV-8 or INV-9 issued? void the one that is, duplicate"),
        calls(("p1", "inv_invoice_find", {"invoiceNo": "INV-8"}), ("p2", "inv_invoice_find", {"invoiceNo": "INV-9"})),
        answer("p2", FOUND), answer("p1", miss),  # answered out of order
    ], skill="inv.invoice.void")
    p1, p2 = r.calls
    assert (p1.call_id, p2.call_id) == ("p1", "p2") and p1.batch == p2.batch
    assert p1.pairing == p2.pairing == Pairing.ID
    assert p1.outcome is not None and p1.outcome["business_ok"] is False
    assert p2.outcome is not None and p2.outcome["business_ok"] is True


def test_a_call_with_no_recorded_answer_is_an_unanswered_call(compiled_example: Any) -> None:
    r = judged(compiled_example, [user("find invoice INV-9"), call("a", "inv_invoice_find", {"invoiceNo": "INV-9"})],
               skill="inv.invoice.query")
    (only,) = r.calls
    assert only.pairing == Pairing.NONE and only.verdict == Verdict.ALLOWED
    assert only.outcome is not None and only.outcome["error"] == "TOOL_IO_ERROR"


def test_arguments_that_are_not_json_are_refused_by_the_argument_policy(compiled_example: Any) -> None:
    r = judged(compiled_example, [user("find invoice INV-9"), call("a", "inv_invoice_find", "{invoiceNo: INV-9"),
                                  answer("a", FOUND)])
    assert r.calls[0].verdict == Verdict.REFUSED and r.calls[0].error == "ARG_JSON_INVALID"


def test_recorded_tool_schemas_are_the_catalog_the_argument_policy_checks(compiled_example: Any) -> None:
    doc = record([user("find invoice INV-9"), call("a", "inv_invoice_find", {}), answer("a", FOUND)])
    doc["tools"] = [{"type": "function", "function": {"name": "inv_invoice_find", "parameters": {
        "type": "object", "properties": {"invoiceNo": {"type": "string"}}, "required": ["invoiceNo"]}}}]
    conv = _conversation("mem.json", "mem", 0, doc, None)
    result = asyncio.run(judge(compiled_example, conv, JudgeOptions(agent="billing", skill="inv.invoice.query")))  # type: ignore[arg-type]
    assert result.calls[0].verdict == Verdict.REFUSED and result.calls[0].error == "ARG_REJECTED"
    assert "missing required argument(s): invoiceNo" in result.calls[0].message
