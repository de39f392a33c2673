"""A Python file loaded as a module by its path: the ledger MCP server, a bench script, a generated
validator module, none of them on an import path."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_module(path: Path, name: str, *, register: bool = False, search: Path | None = None) -> ModuleType:
    """Execute `path` as a new module called `name`. `register` puts it in sys.modules first (a
    dataclass looks its module up there); `search` is put first on sys.path while it runs (a
    script importing its siblings)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[name] = module
    if search is not None:
        sys.path.insert(0, str(search))
    try:
        spec.loader.exec_module(module)
    finally:
        if search is not None:
            sys.path.remove(str(search))
    return module
