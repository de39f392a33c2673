"""The retail example's recorded conversations (examples/retail/transcripts/): OpenAI chat
messages whose every tool answer is exactly what the demo shop answers from its seed, and a label
for every write call (examples/retail/README.md, "Recorded conversations").
"""
from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "examples" / "retail" / "transcripts"
FILES = sorted(TRANSCRIPTS.glob("*.jsonl"))
WRITES = {"cancel_pending_order", "modify_pending_order_address", "return_delivered_order_items",
          "exchange_delivered_order_items", "transfer_to_human_agents"}


def conversation(path: Path) -> dict[str, Any]:
    """The one conversation of a transcript file: `{id, messages}` on one JSON line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1, f"{path.name}: one conversation per file"
    return json.loads(lines[0])


def tool_calls(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool call of a conversation in order (its call index is its position here, from 1)."""
    return [call for m in record["messages"] if m["role"] == "assistant" for call in m.get("tool_calls") or []]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_a_transcript_is_well_formed_chat_completions(path: Path) -> None:
    """System first, then user/assistant/tool; each assistant tool call is answered by the tool
    messages right after it, in order, each by its `tool_call_id`."""
    record = conversation(path)
    assert set(record) == {"id", "messages"} and path.stem.endswith(record["id"])
    messages = record["messages"]
    assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    waiting: list[str] = []
    for m in messages[1:]:
        assert m["role"] in ("user", "assistant", "tool"), m
        if m["role"] == "tool":
            assert waiting and m["tool_call_id"] == waiting.pop(0), m
            json.loads(m["content"])
            continue
        assert not waiting, f"unanswered tool calls before a {m['role']} message"
        if m["role"] == "assistant" and m.get("tool_calls"):
            assert m["content"] is None
            for call in m["tool_calls"]:
                assert call["type"] == "function" and isinstance(json.loads(call["function"]["arguments"]), dict)
                waiting.append(call["id"])
        else:
            assert isinstance(m["content"], str) and m["content"].strip()
    assert not waiting
    ids = [c["id"] for c in tool_calls(record)]
    assert len(ids) == len(set(ids))


def test_the_set_covers_what_the_demo_needs() -> None:
    """6-10 conversations, parallel tool calls, a write repeated with the same arguments."""
    records = [conversation(p) for p in FILES]
    assert 6 <= len(records) <= 10
    assert len({r["id"] for r in records}) == len(records)
    assert any(len(m.get("tool_calls") or []) > 1 for r in records for m in r["messages"])
    repeated = [r["id"] for r in records
                if len({json.dumps([c["function"]["name"], json.loads(c["function"]["arguments"])], sort_keys=True)
                        for c in tool_calls(r) if c["function"]["name"] in WRITES})
                < sum(c["function"]["name"] in WRITES for c in tool_calls(r))]
    assert repeated == ["exchange-repeated"]


def test_labels_judge_exactly_the_write_calls() -> None:
    """labels.json: `"<conversation id>:<call index>": "correct" | "wrong"` for every write call
    and nothing else; the call index counts every tool call of the conversation from 1, as
    `skillc replay` numbers them."""
    labels = json.loads((TRANSCRIPTS / "labels.json").read_text(encoding="utf-8"))
    writes = {f"{r['id']}:{i}" for r in map(conversation, FILES)
              for i, call in enumerate(tool_calls(r), 1) if call["function"]["name"] in WRITES}
    assert set(labels) == writes
    assert set(labels.values()) == {"correct", "wrong"}
    assert sum(v == "wrong" for v in labels.values()) == 7


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_recorded_answer_is_the_shops_own(path: Path, tmp_path: Path) -> None:
    """Replaying the conversation's tool calls in order against a freshly seeded demo shop gives
    each recorded tool message exactly: the transcripts agree with the seed data and the server."""
    from mcp import Client

    from skillc.examples.retail_server import build_server

    record = conversation(path)
    answers = {m["tool_call_id"]: json.loads(m["content"]) for m in record["messages"] if m["role"] == "tool"}

    async def replay() -> None:
        async with Client(build_server(str(tmp_path / "shop.sqlite"))) as client:
            for call in tool_calls(record):
                result = await client.call_tool(call["function"]["name"], json.loads(call["function"]["arguments"]))
                assert result.structured_content == answers[call["id"]], call

    asyncio.run(replay())


def _replay(studio: Path, out: Path) -> dict[str, Any]:
    """`skillc replay` over every transcript with labels.json, as the JSON report."""
    from skillc.main import run

    status = run(["replay", *map(str, FILES), "--studio", str(studio), "--labels", str(TRANSCRIPTS / "labels.json"),
                  "--format", "json", "-o", str(out)])
    assert status == 0
    return json.loads(out.read_text(encoding="utf-8"))


def _stopped_rules(report: dict[str, Any]) -> set[str]:
    """The names of the rules that refused some call."""
    return {m for conv in report["conversations"] for call in conv["calls"]
            for m in re.findall(r"\[(\w+)\]", call.get("message") or "") if call.get("error") == "RULE_VIOLATED"}


def test_replay_with_the_rules_refuses_every_wrong_write_and_no_correct_one(tmp_path: Path) -> None:
    """Judged by the retail studio: the 7 wrong writes are refused (1 by provenance, 6 by rules)
    before reaching the shop; every correct one only waits for the customer's approval."""
    report = _replay(TRANSCRIPTS.parent / "studio", tmp_path / "replay.json")
    labels = report["labels"]
    assert (labels["wrong_calls"], labels["wrong_stopped"], labels["correct_refused"]) == (7, 7, 0), labels
    assert labels["table"]["correct"]["approval_confirmed"] == 7  # each asked, and the customer said yes
    assert _stopped_rules(report) == {"cancel_only_pending", "payment_method_of_customer", "refund_to_original_or_gift_card",
                                      "exchange_only_delivered", "order_of_identified_customer", "new_item_differs",
                                      "gift_card_covers_difference"}


def test_without_its_rules_the_studio_refuses_only_the_invented_values(tmp_path: Path) -> None:
    """The same studio with every `rules` list removed: provenance refuses 1 of the 7 wrong
    writes (the invented order id) and idempotency replays the repeated one; the others combine
    real values wrongly (a gift card the customer named is USER), and would be sent."""
    from skillc.compiler.jsonc import parse_json, plain

    studio = tmp_path / "studio"
    shutil.copytree(TRANSCRIPTS.parent / "studio", studio)
    for path in studio.glob("skills/*/contract.jsonc"):
        contract = plain(parse_json(path.read_text(encoding="utf-8"))[0])
        for spec in contract["tools"].values():
            spec.pop("rules", None)
        path.write_text(json.dumps(contract, indent=2), encoding="utf-8")
    report = _replay(studio, tmp_path / "replay.json")
    labels = report["labels"]
    # stopped: the invented order id (provenance) and the repeated exchange (idempotency, a replay)
    assert (labels["wrong_calls"], labels["wrong_stopped"], labels["correct_refused"]) == (7, 2, 0), labels
    assert (labels["table"]["wrong"]["refused"], labels["table"]["wrong"]["replayed"]) == (1, 1), labels
    assert _stopped_rules(report) == set()
