"""Reading recorded conversations: every shape of the OpenAI message format the issue names,
recorded tool schemas, malformed records reported and skipped (never a crash), and JSONL read as
a stream (a conversation is judged before the rest of the file exists)."""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from helpers.transcripts import FOUND, answer, call, user

from skillc.runtime.replay.run import read_any
from skillc.runtime.replay.recorded import Conversation, RecordedCall, TextReply, Unreadable, UserMessage
from skillc.runtime.words.vocab import Pairing

MESSAGES = [{"role": "system", "content": "be exact"}, user("find INV-9"),
            call("a", "inv_invoice_find", {"invoiceNo": "INV-9"}), answer("a", FOUND),
            {"role": "assistant", "content": [{"type": "text", "text": "INV-9 is issued."}]}]


def _read(path: Path, key: str | None = None) -> list[Any]:
    return list(read_any(str(path), key))


def _shape(conv: Conversation) -> list[str]:
    return [type(i).__name__ for i in conv.items]


def test_a_json_list_of_messages_is_one_conversation(tmp_path: Path) -> None:
    (tmp_path / "one.json").write_text(json.dumps(MESSAGES, indent=2))
    (conv,) = _read(tmp_path / "one.json")
    assert conv.id == "one" and _shape(conv) == ["UserMessage", "RecordedCall", "TextReply"]
    rec = conv.items[1]
    assert isinstance(rec, RecordedCall) and rec.answer == FOUND and rec.pairing == Pairing.ID
    assert isinstance(conv.items[2], TextReply) and conv.items[2].text == "INV-9 is issued."


def test_an_object_with_messages_keeps_its_id_and_tool_schemas(tmp_path: Path) -> None:
    tools = [{"type": "function", "function": {"name": "inv_invoice_find", "parameters": {
        "type": "object", "properties": {"invoiceNo": {"type": "string"}}, "required": ["invoiceNo"]}}}]
    (tmp_path / "obj.json").write_text(json.dumps({"id": "ticket-17", "tools": tools, "messages": MESSAGES}, indent=1))
    (conv,) = _read(tmp_path / "obj.json")
    assert conv.id == "ticket-17" and conv.tools["inv_invoice_find"]["required"] == ["invoiceNo"]


def test_jsonl_is_one_conversation_a_line_and_nested_messages_need_the_key(tmp_path: Path) -> None:
    lines = [json.dumps({"task_id": 3, "traj": MESSAGES}), "", json.dumps({"traj": MESSAGES[:2]})]
    (tmp_path / "runs.jsonl").write_text("\n".join(lines) + "\n")
    first, second = _read(tmp_path / "runs.jsonl", "traj")
    assert (first.id, first.line, second.id, second.line) == ("3", 1, "runs#3", 3)
    (bad, bad2) = _read(tmp_path / "runs.jsonl")  # without --messages-key
    assert isinstance(bad, Unreadable) and "pass --messages-key" in bad.message and bad.line == 1
    (tmp_path / "deep.jsonl").write_text(json.dumps({"data": {"messages": MESSAGES}}) + "\n")
    (deep,) = _read(tmp_path / "deep.jsonl", "data.messages")
    assert isinstance(deep, Conversation) and len(deep.items) == 3


def test_a_whole_file_list_of_conversations(tmp_path: Path) -> None:
    (tmp_path / "many.json").write_text(json.dumps([{"messages": MESSAGES}, MESSAGES], indent=2))
    first, second = _read(tmp_path / "many.json")
    assert (first.id, second.id) == ("many#1", "many#2")


def test_malformed_records_are_reported_with_their_line_and_skipped(tmp_path: Path) -> None:
    lines = [json.dumps(MESSAGES), "{not json", json.dumps({"messages": [{"content": "no role"}]}),
             json.dumps({"messages": [{"role": "assistant", "tool_calls": {"id": "x"}}]}),
             json.dumps({"messages": [{"role": "assistant", "tool_calls": [{"id": "x", "function": {}}]}]}),
             json.dumps({"messages": "hello"}), json.dumps(MESSAGES)]
    (tmp_path / "mixed.jsonl").write_text("\n".join(lines) + "\n")
    got = _read(tmp_path / "mixed.jsonl")
    assert [type(g).__name__ for g in got] == ["Conversation"] + ["Unreadable"] * 5 + ["Conversation"]
    assert [(u.line, u.message.split(":")[0]) for u in got[1:6]] == [
        (2, "not JSON"), (3, "message 1 is not a message object with a role"), (4, "message 1"), (5, "message 1"),
        (6, "the messages are str, not a list")]
    assert "tool_calls is dict" in got[3].message and "no function name" in got[4].message


def test_an_unreadable_file_is_one_unreadable_record(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("[{\"role\": \"user\", ")
    (bad,) = _read(tmp_path / "bad.json")
    assert isinstance(bad, Unreadable) and bad.message.startswith("not JSON")
    (gone,) = _read(tmp_path / "missing.json")
    assert isinstance(gone, Unreadable) and gone.message.startswith("cannot open")


def test_odd_messages_are_noted_not_fatal(tmp_path: Path) -> None:
    msgs = [user("hi"), {"role": "critic", "content": "?"}, answer("zz", {"x": 1})]
    (tmp_path / "odd.json").write_text(json.dumps({"messages": msgs}, indent=1))
    (conv,) = _read(tmp_path / "odd.json")
    assert isinstance(conv, Conversation) and _shape(conv) == ["UserMessage"]
    assert any("'critic'" in n for n in conv.notes) and any("no call is waiting" in n for n in conv.notes)


def test_jsonl_is_streamed_one_record_at_a_time(tmp_path: Path) -> None:
    # A FIFO: the second record is written only after the first conversation came out of the
    # reader, so a reader that took the file whole would wait forever (bounded by the timeouts).
    fifo = tmp_path / "live.jsonl"
    os.mkfifo(fifo)
    got_first = threading.Event()
    failed: list[str] = []

    def writer() -> None:
        with open(fifo, "w") as fh:
            fh.write(json.dumps(MESSAGES) + "\n")
            fh.flush()
            if not got_first.wait(10):
                failed.append("the reader did not yield the first conversation while the file was open")
            fh.write(json.dumps(MESSAGES[:2]) + "\n")

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    reader = read_any(str(fifo))
    first = next(reader)
    got_first.set()
    rest = list(reader)
    t.join(10)
    assert not failed and isinstance(first, Conversation) and len(rest) == 1
    assert isinstance(rest[0], Conversation) and isinstance(rest[0].items[0], UserMessage)
