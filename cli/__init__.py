"""skillc: a compiler and runtime for skill contracts.

The `skillc` package is the command-line face over both halves: `skillc.compiler` (build time)
and `skillc.runtime` (deploy time). Compiler imports stay inside the commands that compile.
"""
from __future__ import annotations

__version__ = "0.1.0"


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `skillc` console script."""
    from skillc.main import run

    return run(argv)
