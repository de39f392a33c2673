"""Model adapters: one interface (`Model`), three adapters (OpenAI-compatible, scripted, test double)."""
from __future__ import annotations

from typing import Any

from skillc.runtime.model.base import Model, ModelError, ModelRequest, ModelResponse, ToolCall, ToolSpec

__all__ = ["Model", "ModelDouble", "ModelError", "ModelRequest", "ModelResponse", "OpenAIChatModel",
           "ScriptedModel", "ToolCall", "ToolSpec", "UnusedEntry"]


_HOME = {"OpenAIChatModel": "openai", "ModelDouble": "double", "ScriptedModel": "scripted", "UnusedEntry": "scripted"}


def __getattr__(name: str) -> Any:
    # Adapters load when used: httpx only with the OpenAI adapter, nothing extra for `model.base`.
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(f"skillc.runtime.model.{home}"), name)
