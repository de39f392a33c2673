"""Compile-on-load, as the CLI hands it to the runtime: the runtime never imports the compiler (not
even by name), so `skillc chat`, `skillc serve` and the tests pass this callable to `load_compiled`
and `create_app` (runtime/compiled/loader.py `StudioCompiler`). The compiler is imported when a studio
source is first compiled: where the compiler extra is missing the ImportError reaches the runtime,
which says to install it or to compile ahead of time."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def compile_on_load(source: str | os.PathLike[str] | Mapping[str, Any], out_dir: Path, *,
                    origin: str | None = None) -> None:
    """Rebuild `out_dir` (incrementally) from a studio directory or SQLite file, or from a studio
    service's document (`{"agents": [...], "skills": [...]}`, named by `origin`)."""
    from skillc.compiler import build, sources

    if isinstance(source, Mapping):
        studio = sources.studio_from_mapping(dict(source), origin=origin or "studio")
    else:
        studio = sources.load_studio(source)
    build.compile_studio(studio, out_dir)
