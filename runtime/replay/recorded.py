"""A recorded conversation as replay reads it, whatever file format it came from: the user's
messages, the agent's tool calls with their recorded answers, and its text replies, in order."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from skillc.runtime.words.vocab import Pairing


@dataclass(slots=True)
class UserMessage:
    """A message the user sent (the USER source of §5.3 from here on)."""

    text: str
    decision: str | None = None  # a skillc trace's explicit answer (CONFIRM / REJECT / CANCEL)


@dataclass(slots=True)
class TextReply:
    """An assistant message without tool calls (kept for the report and confirmation reading)."""

    text: str


@dataclass(slots=True)
class RecordedCall:
    """One tool call the agent made, and what the tool answered (`answer` is the response JSON:
    the text parsed as JSON, else {"text": …}; None with `pairing` NONE when none was recorded)."""

    tool: str
    arguments: Any  # the raw arguments: JSON text, or an object
    call_id: str | None = None
    answer: Any = None
    pairing: Pairing = Pairing.NONE
    failed: str | None = None  # a skillc trace's recorded call error (an ErrorName), if any
    batch: int = 0  # calls of one assistant message share a batch number (parallel calls)


Item = Union[UserMessage, TextReply, RecordedCall]


@dataclass(slots=True)
class Conversation:
    """One recorded conversation: its id, where it was read, and its items in order."""

    id: str
    file: str
    line: int  # 1-based line of a JSONL record (0: the whole file)
    items: list[Item] = field(default_factory=list)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> input schema, if recorded
    notes: list[str] = field(default_factory=list)  # what the reader had to decide (pairing, odd messages)
    end: int = 0  # the byte offset in the file just after this record (progress)


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A record that could not be read: reported and skipped."""

    file: str
    line: int
    message: str
