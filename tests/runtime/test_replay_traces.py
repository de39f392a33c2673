"""skillc's own traces as replay input: a real run's trace (the scenario runner's, over the real
runtime) replays to the live verdicts, the approved write folded into one call confirmed by the
recorded CONFIRM; sessions interleaved in one file come apart; a cut-short answer is noted."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from skillc.main import run as skillc
from skillc.runtime.replay import JudgeOptions, judge
from skillc.runtime.replay.recorded import Conversation, RecordedCall, UserMessage
from skillc.runtime.replay.run import read_any
from skillc.runtime.words.vocab import Pairing, Reading, Verdict

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = {"userId": 7, "organId": 9, "deptPath": "/1/9"}


def test_a_real_runs_trace_replays_to_the_live_verdicts(tmp_path: Path, compiled_example: Any) -> None:
    trace = tmp_path / "run.trace.jsonl"
    scenario = ROOT / "examples" / "scenarios" / "13-invoice-void-delegate-already-voided.yaml"
    assert skillc(["scenario", "run", str(scenario), "--trace", str(trace), "-q"]) == 0
    (conv,) = list(read_any(str(trace)))
    assert isinstance(conv, Conversation) and conv.id == "s1"
    business = [i for i in conv.items if isinstance(i, RecordedCall) and not i.tool.startswith("builtin_")]
    # the gated void and its confirmed run are one call, answered by the confirmed run
    assert [c.tool for c in business] == ["inv_invoice_void", "inv_invoice_get", "inv_invoice_void"]
    assert business[0].pairing == Pairing.NONE and business[2].pairing == Pairing.TRACE
    assert any(isinstance(i, UserMessage) and i.decision == "CONFIRM" for i in conv.items)
    result = asyncio.run(judge(compiled_example, conv, JudgeOptions(agent="billing", platform=PLATFORM)))
    verdicts = [(c.tool, c.verdict) for c in result.calls if c.verdict != Verdict.NOT_JUDGED]
    assert verdicts == [("inv_invoice_void", Verdict.REFUSED), ("inv_invoice_get", Verdict.ALLOWED),
                        ("inv_invoice_void", Verdict.APPROVAL_ASKED)]
    void = [c for c in result.calls if c.tool == "inv_invoice_void"][1]
    assert void.confirmation is not None and void.confirmation.reading == Reading.CONFIRMED
    assert void.after_confirmation is not None and void.after_confirmation["business_ok"] is True
    # the live run refused the first void too: nothing the recording holds went missing
    assert result.counterfactual_from is None
    assert {c.verdict for c in result.calls if c.tool.startswith("builtin_")} == {Verdict.NOT_JUDGED}


def _event(seq: int, session: str, type_: str, **fields: Any) -> str:
    return json.dumps({"seq": seq, "type": type_, "session": session, "turn": 1, **fields})


def test_interleaved_sessions_and_a_cut_short_answer(tmp_path: Path, compiled_example: Any) -> None:
    found = json.dumps({"ok": True, "data": {"code": 0, "data": {"total": 1, "records": []}}})
    cut = json.dumps({"ok": True, "data": '{"code": 0, "data": "' + "x" * 50 + "…"})
    lines = [
        _event(1, "a", "turn.started", message="find INV-1"),
        _event(2, "b", "turn.started", message="find INV-2"),
        _event(3, "a", "mcp.invoked", tool="inv_invoice_find", args={"invoiceNo": "INV-1"}),
        _event(4, "a", "tool.call", tool="inv_invoice_find", builtin=False, args={"invoiceNo": "INV-1"}, ok=True,
               message=found),
        "{not json",
        _event(6, "b", "mcp.invoked", tool="inv_invoice_find", args={"invoiceNo": "INV-2"}),
        _event(7, "b", "tool.call", tool="inv_invoice_find", builtin=False, args={"invoiceNo": "INV-2"}, ok=True,
               message=cut),
        _event(8, "b", "tool.call", tool="inv_invoice_void", builtin=False, args={"invoiceNo": "INV-2"}, ok=False,
               error="PARAM_PROVENANCE_REJECTED", message="refused"),
        _event(9, "a", "mcp.invoked", tool="inv_invoice_get", args={"invoiceNo": "INV-1"}),
        _event(10, "a", "tool.call", tool="inv_invoice_get", builtin=False, args={"invoiceNo": "INV-1"}, ok=False,
               error="TOOL_TIMEOUT", message="the tool did not answer in time"),
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    got = list(read_any(str(path)))
    bad = [g for g in got if not isinstance(g, Conversation)]
    a, b = [g for g in got if isinstance(g, Conversation)]
    assert len(bad) == 1 and bad[0].line == 5
    assert (a.id, b.id) == ("a", "b")
    call_a, timed_out = [i for i in a.items if isinstance(i, RecordedCall)]
    assert call_a.answer == {"code": 0, "data": {"total": 1, "records": []}} and call_a.pairing == Pairing.TRACE
    assert timed_out.failed == "TOOL_TIMEOUT" and timed_out.pairing == Pairing.TRACE  # a call failure stays one
    judged_a = asyncio.run(judge(compiled_example, a, JudgeOptions(agent="billing", skill="inv.invoice.query")))
    outcome = judged_a.calls[1].outcome
    assert judged_a.calls[1].verdict == Verdict.ALLOWED and outcome is not None and outcome["error"] == "TOOL_TIMEOUT"
    find_b, void_b = [i for i in b.items if isinstance(i, RecordedCall)]
    assert isinstance(find_b.answer, str) and any("cut short" in n for n in b.notes)
    assert void_b.pairing == Pairing.NONE and void_b.answer is None
