"""skillc: a compiler and runtime for skill contracts.

The `skillc` package is the command-line face over both halves: `skillc.compiler` (build time)
and `skillc.runtime` (deploy time). Compiler imports stay inside the commands that compile.
"""
from __future__ import annotations

import logging

__version__ = "0.1.0"

# A library logs, an application decides what to show: without a handler Python's last-resort
# handler would print skillc's warnings beside the CLI's own lines. The CLI installs its handler
# (skillc.logs); an embedding application configures logging as it likes.
logging.getLogger("skillc").addHandler(logging.NullHandler())


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `skillc` console script."""
    from skillc.main import run

    return run(argv)
