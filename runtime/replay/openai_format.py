"""Recorded conversations in the OpenAI chat-completions message format, read as a stream.

A file is JSONL (one record a line: read line by line, never whole) when it ends in .jsonl or
.ndjson or its first line is a JSON value on its own; otherwise it is one JSON document. A record
is a list of messages, an object with `messages` (or with the key `--messages-key` names, dotted
for nesting: `traj`, `data.messages`), or, in a whole-file document, a list of such records.

Answers are paired with their calls by `tool_call_id` when every call id of the conversation is
different; when ids repeat (some loggers number calls per turn, or write none) the answers that
follow an assistant message are paired with its calls by position, and the conversation says so.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, BinaryIO

from skillc.runtime.text import jsontext
from skillc.runtime.replay.recorded import Conversation, Item, RecordedCall, TextReply, Unreadable, UserMessage
from skillc.runtime.words.vocab import Pairing

ID_KEYS = ("id", "conversation_id", "session_id", "task_id")
LINE_SUFFIXES = (".jsonl", ".ndjson")


class BadRecord(ValueError):
    """A record that is not a recorded conversation (the message says where and why)."""


def read(path: str, fh: BinaryIO, first: bytes, messages_key: str | None = None) -> Iterator[Conversation | Unreadable]:
    """Every conversation of the open file `fh` (its `first` line already read), in order; an
    unreadable record is yielded as Unreadable."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if path.endswith(LINE_SUFFIXES) or _is_value(first):
        yield from _lines(path, stem, fh, first, messages_key)
        return
    text = first + fh.read()
    try:
        doc = jsontext.loads(text)
    except ValueError as exc:
        yield Unreadable(path, 0, f"not JSON: {exc}")
        return
    records = doc if _is_record_list(doc, messages_key) else [doc]
    for n, record in enumerate(records):
        yield _conversation(path, stem, 0, record, messages_key, index=n if len(records) > 1 else None)


def _is_value(line: bytes) -> bool:
    line = line.strip()
    if not line or line[:1] not in (b"{", b"["):
        return False
    try:
        jsontext.loads(line)
    except ValueError:
        return False
    return True


def _is_record_list(doc: Any, messages_key: str | None) -> bool:
    """A whole-file list of conversations rather than one conversation's messages."""
    if not isinstance(doc, list) or not doc:
        return False
    head = doc[0]
    return isinstance(head, list) or (isinstance(head, dict) and "role" not in head)


def _lines(path: str, stem: str, fh: Any, first: bytes, messages_key: str | None) -> Iterator[Conversation | Unreadable]:
    number, offset = 0, 0
    line = first
    while line:
        number += 1
        offset += len(line)  # counted, not fh.tell(): a pipe cannot tell
        if line.strip():
            try:
                record = jsontext.loads(line)
            except ValueError as exc:
                yield Unreadable(path, number, f"not JSON: {exc}")
            else:
                conv = _conversation(path, stem, number, record, messages_key)
                if isinstance(conv, Conversation):
                    conv.end = offset
                yield conv
        line = fh.readline()


def _conversation(path: str, stem: str, line: int, record: Any, messages_key: str | None,
                  index: int | None = None) -> Conversation | Unreadable:
    try:
        messages = _messages_of(record, messages_key)
        conv = Conversation(id=_id_of(record, stem, line, index), file=path, line=line)
        if isinstance(record, dict):
            conv.tools = tool_schemas(record.get("tools"))
        conv.items = _items(messages, conv.notes)
    except BadRecord as exc:
        return Unreadable(path, line, str(exc))
    return conv


def _messages_of(record: Any, messages_key: str | None) -> list[Any]:
    if messages_key:
        value = record
        for part in messages_key.split("."):
            if not isinstance(value, dict) or part not in value:
                raise BadRecord(f"no {messages_key!r} in the record")
            value = value[part]
    elif isinstance(record, dict):
        if "messages" not in record:
            keys = ", ".join(sorted(str(k) for k in record)[:6])
            raise BadRecord(f"an object without `messages` (keys: {keys}); nested? pass --messages-key")
        value = record["messages"]
    else:
        value = record
    if not isinstance(value, list):
        raise BadRecord(f"the messages are {type(value).__name__}, not a list")
    return value


def _id_of(record: Any, stem: str, line: int, index: int | None) -> str:
    if isinstance(record, dict):
        for key in ID_KEYS:
            value = record.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                return str(value)
    if line:
        return f"{stem}#{line}"
    return f"{stem}#{index + 1}" if index is not None else stem


def tool_schemas(tools: Any) -> dict[str, dict[str, Any]]:
    """Recorded tool definitions (OpenAI `tools`, or MCP-style {name, inputSchema}) -> name ->
    input schema: the catalog ArgPolicy checks required fields against."""
    out: dict[str, dict[str, Any]] = {}
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function")
        spec: dict[str, Any] = fn if isinstance(fn, dict) else tool
        name = spec.get("name")
        schema = spec.get("parameters", spec.get("inputSchema", spec.get("input_schema")))
        if isinstance(name, str) and isinstance(schema, dict):
            out[name] = schema
    return out


def content_text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of parts joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content
                         if not isinstance(p, dict) or isinstance(p.get("text", ""), str))
    return jsontext.dumps(content)


def answer_json(content: Any) -> Any:
    """The response JSON of a recorded answer, as the MCP gateway makes one: structured content
    (an object) as it is, else the text parsed as JSON, else {"text": text}."""
    if isinstance(content, dict):
        return content
    text = content_text(content)
    try:
        return jsontext.loads(text)
    except ValueError:
        return {"text": text}


def _calls_of(msg: dict[str, Any], where: str) -> list[tuple[str, Any, str | None]]:
    """(name, raw arguments, call id) of an assistant message's tool calls (or legacy function_call)."""
    calls = msg.get("tool_calls")
    if calls is None and isinstance(msg.get("function_call"), dict):
        calls = [{"function": msg["function_call"]}]
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise BadRecord(f"{where}: tool_calls is {type(calls).__name__}, not a list")
    out = []
    for k, tc in enumerate(calls):
        fn = tc.get("function") if isinstance(tc, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(fn, dict) or not isinstance(name, str) or not name:
            raise BadRecord(f"{where}: tool call {k + 1} has no function name")
        call_id = tc.get("id")
        out.append((name, fn.get("arguments", "{}"), call_id if isinstance(call_id, str) else None))
    return out


def _items(messages: list[Any], notes: list[str]) -> list[Item]:
    ids: list[str | None] = []
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list):
            ids.extend(tc.get("id") if isinstance(tc, dict) else None for tc in m["tool_calls"])
    by_id = bool(ids) and None not in ids and len(set(ids)) == len(ids)
    if ids and not by_id:
        notes.append("call ids repeat (or are missing): answers are paired with calls by position")
    items: list[Item] = []
    batch: list[RecordedCall] = []
    index: dict[str, RecordedCall] = {}
    batches = 0
    for n, m in enumerate(messages, 1):
        where = f"message {n}"
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise BadRecord(f"{where} is not a message object with a role")
        role = m["role"]
        if role == "user":
            items.append(UserMessage(content_text(m.get("content"))))
        elif role == "assistant":
            calls = _calls_of(m, where)
            if calls:
                batches += 1
                batch = [RecordedCall(tool=name, arguments=args, call_id=cid, batch=batches) for name, args, cid in calls]
                items.extend(batch)
                if by_id:
                    index.update((c.call_id, c) for c in batch if c.call_id)
            elif content_text(m.get("content")).strip():
                items.append(TextReply(content_text(m.get("content"))))
        elif role in ("tool", "function"):
            call = index.get(m.get("tool_call_id") or "") if by_id and role == "tool" else None
            how = Pairing.ID
            if call is None or call.pairing != Pairing.NONE:
                call, how = next((c for c in batch if c.pairing == Pairing.NONE), None), Pairing.POSITION
                if call is not None and by_id:
                    notes.append(f"{where}: its tool_call_id names no open call; paired by position")
            if call is None:
                notes.append(f"{where}: an answer no call is waiting for; ignored")
                continue
            call.answer, call.pairing = answer_json(m.get("content")), how
        elif role not in ("system", "developer"):
            notes.append(f"{where}: role {role!r} is not a chat-completions role; ignored")
    return items
