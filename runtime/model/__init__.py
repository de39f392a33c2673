"""Model adapters: one interface (`Model`), three adapters (OpenAI-compatible, scripted, test double)."""
from __future__ import annotations

from typing import Any

from skillc.runtime.model.base import Model, ModelError, ModelRequest, ModelResponse, ToolCall, ToolSpec
from skillc.runtime.model.double import ModelDouble
from skillc.runtime.model.scripted import ScriptedModel, UnusedEntry

__all__ = ["Model", "ModelDouble", "ModelError", "ModelRequest", "ModelResponse", "OpenAIChatModel",
           "ScriptedModel", "ToolCall", "ToolSpec", "UnusedEntry"]


def __getattr__(name: str) -> Any:
    # httpx is loaded only when the OpenAI adapter is used.
    if name == "OpenAIChatModel":
        from skillc.runtime.model.openai import OpenAIChatModel

        return OpenAIChatModel
    raise AttributeError(name)
