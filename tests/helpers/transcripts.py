"""Building recorded OpenAI-format conversations for the replay tests, and judging them."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from skillc.runtime.replay import ConversationResult, JudgeOptions, judge
from skillc.runtime.replay.openai_format import _conversation

PLATFORM = {"userId": 7, "organId": 9, "deptPath": "/1/9"}
ROOT = Path(__file__).resolve().parents[2]
# the billing example's recorded conversations and labels, and the identity they were had with
LOGS = str(ROOT / "examples" / "transcripts" / "billing.jsonl")
LABELS = str(ROOT / "examples" / "transcripts" / "billing.labels.json")
WHO = [arg for key, value in PLATFORM.items() for arg in ("--platform", f"{key}={value}")]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def calls(*specs: tuple[str | None, str, dict[str, Any] | str]) -> dict[str, Any]:
    """One assistant message with these tool calls: (call id, tool, arguments)."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {**({"id": cid} if cid is not None else {}), "type": "function",
         "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
        for cid, name, args in specs]}


def call(cid: str | None, tool: str, args: dict[str, Any] | str) -> dict[str, Any]:
    return calls((cid, tool, args))


def answer(cid: str | None, value: Any) -> dict[str, Any]:
    return {"role": "tool", **({"tool_call_id": cid} if cid is not None else {}),
            "content": value if isinstance(value, str) else json.dumps(value)}


FOUND = {"code": 0, "data": {"total": 1, "records": [{"invoiceNo": "INV-9", "status": "ISSUED"}]}}
VOIDED = {"code": 0, "data": {"invoiceNo": "INV-9"}}
VOID = {"invoiceNo": "INV-9", "reason": "duplicate"}


def record(messages: list[dict[str, Any]], cid: str = "c") -> dict[str, Any]:
    return {"id": cid, "messages": messages}


def judged(studio: Any, messages: list[dict[str, Any]], **options: Any) -> ConversationResult:
    """One conversation (as a recorded record) judged with the example studio's billing agent."""
    conv = _conversation("mem.json", "mem", 0, record(messages), None)
    assert not hasattr(conv, "message"), conv
    opts = JudgeOptions(**{"agent": "billing", "platform": PLATFORM, **options})
    return asyncio.run(judge(studio, conv, opts))  # type: ignore[arg-type]
