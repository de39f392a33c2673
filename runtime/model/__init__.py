"""Model adapters: one interface (`Model`), three adapters (OpenAI-compatible, scripted, test double)."""
from __future__ import annotations

from skillc.runtime.model.base import Model, ModelError, ModelRequest, ModelResponse, ToolCall, ToolSpec

__all__ = ["Model", "ModelError", "ModelRequest", "ModelResponse", "ToolCall", "ToolSpec"]
