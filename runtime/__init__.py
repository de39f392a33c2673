"""Deploy time: sessions, tasks, nodes, the tool-call chain, evidence, store, MCP, models, trace.

The public API is small: `async with open_runtime(config or parts) as rt:` (or build a `Runtime`
over an MCP gateway, a model, a `Store` and `Settings`), `open_session` with a platform identity,
then `send` messages and `answer` decisions; every step is a trace event (`Runtime.trace`,
listeners welcome). Every error skillc raises is a `SkillcError`. Nothing here imports the
compiler or Lark.
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Reply", "Runtime", "Session", "Settings", "SkillcError", "Store", "TraceWriter", "load_compiled",
           "open_runtime"]

# Lazy, so `import skillc.runtime.support` from a generated module stays cheap: name -> module.
_HOME = {
    "Reply": "skillc.runtime.graph.tasks",
    "Runtime": "skillc.runtime.session",
    "Session": "skillc.runtime.session",
    "Settings": "skillc.runtime.outside.config",
    "SkillcError": "skillc.runtime.words.errors",
    "Store": "skillc.runtime.store",
    "TraceWriter": "skillc.runtime.telemetry.trace",
    "load_compiled": "skillc.runtime.compiled.loader",
    "open_runtime": "skillc.runtime.opener",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(name)
    return getattr(importlib.import_module(home), name)
