"""The scripted model: plays a scenario turn's `model:` entries (docs/reference/scenarios.md) in order.

Entry kinds and the purpose each answers:

    route: <agent_code>              route   choice {"agent": code}
    intent: [<skill_key>, ...]       intent  choice {"skills": [...]}
    plan: {nodes: [...]}             plan    choice = the mapping
    call: {tool, args}               step    one tool call
    calls: [{tool, args}, ...]       step    several tool calls
    text: "..."                      step    text, no tool call (may also accompany call/calls)

`args` given as a mapping (or any non-string) is sent as its JSON text; a string is sent as is,
so a script can hand the runtime malformed arguments such as "{not json".
"""
from __future__ import annotations

import copy
import json
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skillc.runtime.model.base import ModelError, ModelRequest, ModelResponse, ToolCall

ANSWER_KINDS = ("route", "intent", "plan")
STEP_KINDS = ("call", "calls", "text")
ENTRY_KINDS = ANSWER_KINDS + STEP_KINDS


@dataclass(frozen=True)
class UnusedEntry:
    """A script entry discarded at the end of its turn: its turn (1-based), position in it (1-based), text."""

    turn: int
    position: int
    entry: Mapping[str, Any]


def check_entry(entry: Any) -> str | None:
    """What is wrong with one `model:` entry, or None when it is well formed."""
    if not isinstance(entry, Mapping):
        return f"an entry must be a mapping, got {entry!r}"
    unknown = sorted(str(key) for key in entry if key not in ENTRY_KINDS)
    if unknown:
        return f"unknown entry key(s) {', '.join(unknown)} (expected one of {', '.join(ENTRY_KINDS)})"
    kinds = [kind for kind in ENTRY_KINDS if kind in entry]
    if not kinds:
        return "an entry needs one of " + ", ".join(ENTRY_KINDS)
    if len(kinds) > 1 and kinds not in (["call", "text"], ["calls", "text"]):
        return f"an entry has one kind, got {', '.join(kinds)}"
    kind, value = kinds[0], entry[kinds[0]]
    if kind == "route" and not (isinstance(value, str) and value):
        return f"route needs an agent code, got {value!r}"
    if kind == "intent" and not (isinstance(value, list) and all(isinstance(key, str) for key in value)):
        return f"intent needs a list of skill keys, got {value!r}"
    if kind == "plan" and not isinstance(value, Mapping):
        return f"plan needs a mapping such as {{nodes: [...]}}, got {value!r}"
    if kind == "call":
        return _check_call(value)
    if kind == "calls":
        if not isinstance(value, list) or not value:
            return f"calls needs a non-empty list of {{tool, args}}, got {value!r}"
        for call in value:
            problem = _check_call(call)
            if problem:
                return problem
    if "text" in entry and not isinstance(entry["text"], str):
        return f"text needs a string, got {entry['text']!r}"
    return None


def entry_kind(entry: Mapping[str, Any]) -> str:
    """The kind of a well-formed entry (`call`/`calls` win over an accompanying `text`)."""
    return next(kind for kind in ENTRY_KINDS if kind in entry)


def entry_purpose(kind: str) -> str:
    """The request purpose an entry kind answers."""
    return kind if kind in ANSWER_KINDS else "step"


class ScriptedModel:
    """A `Model` that answers each request with the next script entry of the current turn."""

    def __init__(self, entries: Sequence[Mapping[str, Any]] | None = None) -> None:
        """Optionally load a first turn's entries."""
        self.requests: list[ModelRequest] = []
        self.unused: list[UnusedEntry] = []
        self.turn = 0
        self._queue: deque[tuple[int, Mapping[str, Any]]] = deque()
        self._call_ids = 0
        if entries is not None:
            self.load_turn(entries)

    def load_turn(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Start a turn with these entries; leftovers of the previous turn go to `unused`.

        Raises ModelError naming the first malformed entry (nothing is loaded then).
        """
        for position, entry in enumerate(entries, 1):
            problem = check_entry(entry)
            if problem:
                raise ModelError(f"script: turn {self.turn + 1}, entry {position}: {problem}")
        self.finish_turn()
        self.turn += 1
        self._queue = deque(enumerate(entries, 1))

    def finish_turn(self) -> list[UnusedEntry]:
        """Discard the current turn's leftover entries, remember them in `unused`, and return them."""
        leftovers = [UnusedEntry(self.turn, position, entry) for position, entry in self._queue]
        self._queue.clear()
        self.unused.extend(leftovers)
        return leftovers

    @property
    def pending(self) -> list[Mapping[str, Any]]:
        """The entries of the current turn not played yet."""
        return [entry for _, entry in self._queue]

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Pop the next entry if it answers `request.purpose`; ModelError on a mismatch or an empty queue."""
        self.requests.append(request)
        if not self._queue:
            raise ModelError(f"script: the runtime asked for {request.purpose} after the script was used up "
                             f"(turn {self.turn})")
        position, entry = self._queue[0]
        kind = entry_kind(entry)
        if entry_purpose(kind) != request.purpose:
            # The entry stays queued, so the report lists it among the unused ones.
            raise ModelError(f"script: the runtime asked for {request.purpose} but the next entry is {kind} "
                             f"(turn {self.turn}, entry {position}: {_compact(entry)})")
        self._queue.popleft()
        return self._response(kind, entry)

    def _response(self, kind: str, entry: Mapping[str, Any]) -> ModelResponse:
        value = entry[kind]
        if kind == "route":
            return ModelResponse(choice={"agent": value})
        if kind == "intent":
            return ModelResponse(choice={"skills": list(value)})
        if kind == "plan":
            # A copy: the runtime may annotate the plan, the script must stay as written.
            return ModelResponse(choice=copy.deepcopy(dict(value)))
        text = entry.get("text", "")
        calls = [value] if kind == "call" else list(value) if kind == "calls" else []
        return ModelResponse(text=text, tool_calls=[self._tool_call(call) for call in calls])

    def _tool_call(self, call: Mapping[str, Any]) -> ToolCall:
        self._call_ids += 1
        args = call.get("args", {})
        arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        return ToolCall(id=f"call_{self._call_ids}", name=call["tool"], arguments=arguments)


def _check_call(call: Any) -> str | None:
    if not isinstance(call, Mapping) or not isinstance(call.get("tool"), str) or not call["tool"]:
        return f"a call needs {{tool: <name>, args: ...}}, got {call!r}"
    unknown = sorted(str(key) for key in call if key not in ("tool", "args"))
    if unknown:
        return f"a call has only tool and args, got {', '.join(unknown)}"
    return None


def _compact(entry: Mapping[str, Any]) -> str:
    text = json.dumps(entry, ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:200] + "…"
