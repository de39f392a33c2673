"""One module per `skillc` sub-command: HELP, DESCRIPTION, configure(parser), run(args) -> int."""
from __future__ import annotations

import os
from typing import Any

SOURCE_HELP = "studio directory or SQLite file (default: ./examples/studio, else the bundled example studio)"


def studio_source(given: str | None) -> str:
    """The studio a command reads: the one given, else ./examples/studio when it exists, else the
    example studio shipped inside the package (so `skillc check` works from any directory)."""
    if given:
        return given
    if os.path.isdir(os.path.join("examples", "studio")):
        return os.path.join("examples", "studio")
    import skillc.examples

    return os.path.join(os.path.dirname(os.path.abspath(skillc.examples.__file__)), "studio")


def load_source(command: str, given: str | None) -> tuple[str, Any]:
    """Resolve and load a command's studio source; on an unreadable source print one line naming
    the command and return (source, None): the caller exits 2. The studio is an `ir.Studio`. Imports the compiler lazily."""
    import sys

    from skillc.compiler.sources import SourceError, load_studio

    source = studio_source(given)
    try:
        return source, load_studio(source)
    except SourceError as exc:
        print(f"skillc {command}: error: {exc}", file=sys.stderr)
        return source, None
