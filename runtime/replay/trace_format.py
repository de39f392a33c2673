"""skillc's own trace files (JSON lines, as `skillc chat --trace` and the scenario runner write
them) as recorded conversations: one conversation per session.

A session's user messages are its `turn.started` messages (an explicit decision, `CONFIRM` …, is
kept as one); its calls are its `tool.call` events, each with the answer its observation carries
(`data`) when the tool was reached (an `mcp.invoked` of that tool came first) or the live run
replayed an earlier result. A write the live run stopped for approval and ran after the user's
CONFIRM is two events there; here it is one call, whose answer is the confirmed run's (replay
asks, reads the CONFIRM, and runs it again as the runtime did). The file is read line by line; a
trace interleaves sessions, so its conversations are judged once the file has been read.
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from skillc.runtime.words.event_types import McpInvoked, ToolCall, TurnStarted, as_event
from skillc.runtime.words.events import EventName
from skillc.runtime.text import jsontext
from skillc.runtime.words.errors import ErrorName
from skillc.runtime.replay.recorded import Conversation, RecordedCall, Unreadable, UserMessage
from skillc.runtime.words.vocab import Decision, Pairing

TRUNCATED = "a recorded answer was cut short in the trace (over 4,000 characters): it is judged as the text kept"


def is_trace_line(line: bytes) -> bool:
    """True when a file's first line is a skillc trace event."""
    try:
        event = jsontext.loads(line)
    except ValueError:
        return False
    return isinstance(event, dict) and "seq" in event and isinstance(event.get("type"), str) and "session" in event


class _Session:
    def __init__(self, conv: Conversation) -> None:
        self.conv = conv
        self.invoked: list[str] = []  # tools reached since the last tool.call
        self.gated: dict[str, RecordedCall] = {}  # tool -> its call stopped for approval, waiting
        self.confirmed = False
        self.batch = 0


def read(path: str, fh: BinaryIO, first: bytes) -> Iterator[Conversation | Unreadable]:
    """Every session of the open trace file `fh` (its `first` line already read) as a
    conversation (see the module's docstring)."""
    sessions: dict[str, _Session] = {}
    for number, line in enumerate(itertools.chain([first], fh), 1):
        if not line.strip():
            continue
        try:
            event = jsontext.loads(line)
        except ValueError as exc:
            yield Unreadable(path, number, f"not JSON: {exc}")
            continue
        if not isinstance(event, dict) or not isinstance(event.get("session"), str):
            continue  # not a session's event (a trace may carry others): nothing to replay
        sid = event["session"]
        state = sessions.get(sid)
        if state is None:
            state = sessions[sid] = _Session(Conversation(id=sid, file=path, line=number))
        _take(state, event)
    size = os.path.getsize(path) if os.path.isfile(path) else 0
    for state in sessions.values():
        state.conv.end = size
        yield state.conv


def _take(state: _Session, raw: dict[str, Any]) -> None:
    """One line of the session: its type's handler (`TAKEN`), if it has one. A trace may have been
    written by another version or edited: each handler checks the fields it reads."""
    event = as_event(raw)
    take = TAKEN.get(event["type"]) if event is not None else None
    if take is not None:
        take(state, event)


def _turn_started(state: _Session, event: TurnStarted) -> None:
    answer = event.get("answer")
    message = event.get("message")
    if isinstance(message, str):
        state.conv.items.append(UserMessage(message))
    elif isinstance(answer, dict) and isinstance(answer.get("decision"), str):
        state.conv.items.append(UserMessage("", decision=answer["decision"]))
        state.confirmed = answer["decision"] == Decision.CONFIRM


def _mcp_invoked(state: _Session, event: McpInvoked) -> None:
    tool = event.get("tool")
    if isinstance(tool, str):
        state.invoked.append(tool)


def _tool_call(state: _Session, event: ToolCall) -> None:
    tool = event.get("tool")
    if not isinstance(tool, str):
        return
    reached = tool in state.invoked
    state.invoked = []
    data, truncated = _data(event.get("message"))
    gated = state.gated.pop(tool, None) if state.confirmed and reached else None
    if gated is not None:  # the confirmed run of a call asked for approval: one call here
        _answer(gated, event, data)
        state.confirmed = False
        if truncated:
            state.conv.notes.append(TRUNCATED)
        return
    state.batch += 1
    args = event.get("args")
    call = RecordedCall(tool=tool, arguments=args if isinstance(args, dict) else {}, batch=state.batch)
    if reached or event.get("replayed"):
        _answer(call, event, data)
        if truncated:
            state.conv.notes.append(TRUNCATED)
    if event.get("error") == ErrorName.APPROVAL_REQUIRED:
        state.gated[tool] = call
    state.conv.items.append(call)


# keyed by EventName, looked up by the plain strings a file holds; the other types say nothing replay needs
TAKEN: dict[str, Callable[[_Session, Any], None]] = {
    EventName.TURN_STARTED: _turn_started,
    EventName.MCP_INVOKED: _mcp_invoked,
    EventName.TOOL_CALL: _tool_call,
}
"""The event types a recorded conversation is made of, each by its handler."""


def _answer(call: RecordedCall, event: ToolCall, data: Any) -> None:
    call.answer, call.pairing = data, Pairing.TRACE
    error = event.get("error")
    # a call failure the gateway reported (timeout, I/O, the tool's own error flag) stays one;
    # a business failure is the contract's verdict on the answer and is judged again here
    if isinstance(error, str) and error not in (ErrorName.TOOL_BUSINESS_FAILED, ErrorName.APPROVAL_REQUIRED):
        call.failed = error


def _data(message: Any) -> tuple[Any, bool]:
    """The answer an observation carries, and whether the trace cut it short."""
    if not isinstance(message, str):
        return None, False
    try:
        obs = jsontext.loads(message)
    except ValueError:
        return None, False
    if not isinstance(obs, dict) or "data" not in obs:
        return None, False
    data = obs["data"]
    if isinstance(data, str) and data.endswith("…"):
        try:
            jsontext.loads(data[:-1])
        except ValueError:
            return data, True
    return data, False
