"""Deploy time: loader, chain, gate, evidence, builtins, node, planner, store, MCP, models, trace.

The public API is small: `load_compiled` a studio, build a `Runtime` over an MCP gateway, a model,
a `Store` and `Settings`, `open_session` with a platform identity, then `send` messages and
`answer` decisions; every step is a trace event (`Runtime.trace`, listeners welcome). Nothing here
imports the compiler or Lark.
"""
from __future__ import annotations

from typing import Any

__all__ = ["Reply", "Runtime", "Session", "Settings", "Store", "TraceWriter", "load_compiled"]


def __getattr__(name: str) -> Any:
    # Lazy, so `import skillc.runtime.support` from a generated module stays cheap.
    if name in ("Reply", "Runtime", "Session"):
        from skillc.runtime import session

        return getattr(session, name)
    if name == "Settings":
        from skillc.runtime.config import Settings

        return Settings
    if name == "Store":
        from skillc.runtime.store import Store

        return Store
    if name == "TraceWriter":
        from skillc.runtime.trace import TraceWriter

        return TraceWriter
    if name == "load_compiled":
        from skillc.runtime.loader import load_compiled

        return load_compiled
    raise AttributeError(name)
