"""The model interface every adapter implements.

A request names its purpose:
- `route`  choose an agent: the answer is `ModelResponse.choice` = {"agent": "<agent_code>"}
- `intent` choose candidate skills: `choice` = {"skills": ["<skill_key>", ...]}
- `plan`   plan a task graph: `choice` = {"nodes": [{"id", "skill", "target"?, "deps": [...]}, ...]}
- `step`   one ReAct step of a node: `text` and zero or more `tool_calls`
For route/intent/plan the request carries `answer_schema` (a JSON Schema of `choice`); a chat
adapter asks the model to call one function with that schema and parses its arguments.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from skillc.runtime.words.errors import SkillcError

Purpose = Literal["route", "intent", "plan", "step"]


@dataclass
class ToolSpec:
    """A function offered to the model: name, description and JSON Schema of its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class ToolCall:
    """One tool call of a step. `arguments` is the raw text the model sent (may be invalid JSON)."""

    id: str
    name: str
    arguments: str


@dataclass
class ModelRequest:
    """What the runtime asks: chat messages (OpenAI shape), the offered tools, the purpose."""

    purpose: Purpose
    messages: list[dict[str, Any]]
    tools: list[ToolSpec] = field(default_factory=list)
    answer_schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class Usage:
    """Tokens a model call consumed, as the server reported them."""

    input_tokens: int
    output_tokens: int


@dataclass
class ModelResponse:
    """The model's answer: free text, tool calls (step), or a structured choice (route/intent/plan).
    `usage`, `response_model` and `response_id` are what the server said about the call (None when
    it said nothing; telemetry reports them)."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    choice: Any = None
    usage: Usage | None = None
    response_model: str | None = None
    response_id: str | None = None


class ModelError(SkillcError):
    """The model could not answer (transport failure after retries, malformed reply, script mismatch)."""

    name = "MODEL_ERROR"  # what the trace's `error` event and the service's RUN_ERROR call it


class Model(Protocol):
    """Every adapter: one async call per request."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer one request."""
        ...
