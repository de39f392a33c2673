"""Replay has no checks of its own: it runs the runtime's chain. Changing the chain (a step added,
a step taken out) or a setting the chain reads changes replay's verdicts with it."""
from __future__ import annotations

from typing import Any

import pytest
from helpers.transcripts import FOUND, VOID, VOIDED, answer, call, judged, say, user

from skillc.runtime.call import chain
from skillc.runtime.outside.config import Settings
from skillc.runtime.words.errors import ErrorName
from skillc.runtime.words.vocab import Verdict

CONVERSATION = [
    user("Void invoice INV-9 please, reason: duplicate"),
    call("a", "inv_invoice_find", {"invoiceNo": "INV-9"}), answer("a", FOUND),
    say("Void INV-9?"), user("yes"),
    call("b", "inv_invoice_void", VOID), answer("b", VOIDED),
]


def test_a_step_added_to_the_chain_refuses_in_replay(compiled_example: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    before = judged(compiled_example, CONVERSATION)
    assert before.calls[0].verdict == Verdict.ALLOWED

    def no_lookups_on_invoices(c: chain.Call) -> chain.CallResult | None:
        if c.tool == "inv_invoice_find":
            return chain.reject(ErrorName.ARG_REJECTED, "invoice lookups are switched off", args=c.trace_args())
        return None

    monkeypatch.setattr(chain, "BEFORE", (*chain.BEFORE, no_lookups_on_invoices))
    after = judged(compiled_example, CONVERSATION)
    find, void = after.calls
    assert find.verdict == Verdict.REFUSED and find.message == "invoice lookups are switched off"
    # its answer is no evidence now, so the void's invoice number comes from nowhere
    assert void.verdict == Verdict.REFUSED and void.error == "PARAM_PROVENANCE_REJECTED" and void.counterfactual


def test_the_write_gate_taken_out_of_the_chain_asks_no_approval(compiled_example: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert judged(compiled_example, CONVERSATION).calls[1].verdict == Verdict.APPROVAL_ASKED
    monkeypatch.setattr(chain, "BEFORE", tuple(s for s in chain.BEFORE if s is not chain.step_write_gate))
    void = judged(compiled_example, CONVERSATION).calls[1]
    assert void.verdict == Verdict.ALLOWED and void.outcome is not None and void.outcome["business_ok"] is True


def test_the_fingerprint_limit_the_chain_reads_applies_in_replay(compiled_example: Any) -> None:
    same = [user("find invoice INV-9")] + [m for k in "abc" for m in (call(k, "inv_invoice_find", {"invoiceNo": "INV-9"}),
                                                                     answer(k, FOUND))]
    skill = "inv.invoice.query"
    assert [c.verdict for c in judged(compiled_example, same, skill=skill).calls] == [Verdict.ALLOWED] * 3
    tight = judged(compiled_example, same, skill=skill, settings=Settings(fingerprint_limit=2))
    assert [c.verdict for c in tight.calls] == [Verdict.ALLOWED, Verdict.ALLOWED, Verdict.REFUSED]
    assert tight.calls[2].error == "FINGERPRINT_TRIP"
