"""Build time: studio sources -> parse -> typed IR -> validate -> codegen -> graph templates.

Public API: `load_studio` (directory or SQLite), `check_studio` (front end: parse + validate),
`compile_studio` (validator modules, graph templates, manifest), `parse_contract`.
"""
from __future__ import annotations

from typing import Any

__all__ = ["check_studio", "compile_studio", "load_studio", "parse_contract"]


def __getattr__(name: str) -> Any:
    if name == "compile_studio":
        from skillc.compiler.build import compile_studio

        return compile_studio
    if name == "check_studio":
        from skillc.compiler.frontend import check_studio

        return check_studio
    if name == "load_studio":
        from skillc.compiler.sources import load_studio

        return load_studio
    if name == "parse_contract":
        from skillc.compiler.parse import parse_contract

        return parse_contract
    raise AttributeError(name)
