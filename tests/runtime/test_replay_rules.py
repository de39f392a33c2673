"""A rule of a tool contract refuses in replay as it does live, with no replay code for rules:
the retail example's recorded cancellation of a delivered order meets its `cancel_only_pending`
rule, and taken out of the chain the rules step takes the refusal with it."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from skillc.compiler.build import compile_studio
from skillc.runtime.call import chain
from skillc.runtime.compiled.loader import load_compiled
from skillc.runtime.replay import JudgeOptions, judge
from skillc.runtime.replay.run import read_any
from skillc.runtime.replay.recorded import Conversation
from skillc.runtime.words.vocab import Verdict

RETAIL = Path(__file__).resolve().parents[2] / "examples" / "retail"


@pytest.fixture(scope="module")
def retail(tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("retail")
    compile_studio(RETAIL / "studio", out)
    return load_compiled(out)


def _judged(studio: Any, name: str) -> Any:
    (conv,) = list(read_any(str(RETAIL / "transcripts" / name)))
    assert isinstance(conv, Conversation)
    return asyncio.run(judge(studio, conv, JudgeOptions()))


def test_a_rule_refuses_the_cancellation_of_a_delivered_order(retail: Any) -> None:
    cancel = _judged(retail, "02-cancel-delivered.jsonl").calls[3]
    assert cancel.tool == "cancel_pending_order" and cancel.verdict == Verdict.REFUSED
    assert cancel.error == "RULE_VIOLATED" and "[cancel_only_pending]" in cancel.message


def test_without_the_rules_step_the_same_call_is_only_asked_for_approval(retail: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chain, "BEFORE", tuple(s for s in chain.BEFORE if s is not chain.step_rules))
    cancel = _judged(retail, "02-cancel-delivered.jsonl").calls[3]
    assert cancel.verdict == Verdict.APPROVAL_ASKED
    # the user's yes runs it: the shop's recorded refusal is then judged a business failure
    assert cancel.after_confirmation is not None and cancel.after_confirmation["business_ok"] is False
