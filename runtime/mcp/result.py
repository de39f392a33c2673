"""What one tool call produced, and how an MCP tool result becomes the spec's "response JSON"."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from skillc.runtime.text import jsontext


@dataclass(frozen=True)
class ToolInfo:
    """A catalog entry: one tool as its server lists it, and which server that is."""

    name: str
    title: str | None
    description: str | None
    input_schema: dict[str, Any]
    server: str

    @cached_property
    def required(self) -> tuple[str, ...]:
        """The input schema's required top-level fields (read on every call: worked out once per
        catalog entry, which lives as long as its catalog)."""
        return tuple(r for r in ((self.input_schema or {}).get("required") or ()) if isinstance(r, str))


@dataclass(frozen=True)
class CallOutcome:
    """The result of `McpGateway.call`.

    `response` is the response JSON (docs/interpretations.md: Response JSON) when the server answered (also for an
    `MCP_TOOL_ERROR` result), else None. `error` is None on success, else an error name of
    `skillc.runtime.words.errors` (§14.4). `message` is human text: the tool's own text, or why it failed.
    `unreadable` says why an answer that came could not be read at all (JSON nested too deep to
    read): the call completed, so a write is settled, with a business failure saying why.
    """

    response: Any
    error: str | None
    message: str
    server: str | None = field(default=None, compare=False)
    unreadable: str | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        """True when the tool answered and did not flag its result as an error."""
        return self.error is None


def content_text(result: Any) -> str:
    """The text blocks of an MCP `CallToolResult`, joined by newlines."""
    return "\n".join(block.text for block in result.content or () if getattr(block, "type", None) == "text")


def response_json(result: Any) -> Any:
    """`structured_content`, else the text parsed as JSON, else `{"text": text}`
    (docs/interpretations.md: Response JSON)."""
    if result.structured_content is not None:
        return result.structured_content
    text = content_text(result)
    try:
        return jsontext.loads(text)
    except jsontext.TooDeep:
        raise  # JSON, but nested too deep to read: not text to pass on (the gateway says why)
    except ValueError:
        return {"text": text}
