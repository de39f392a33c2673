"""One module per `skillc` sub-command: HELP, DESCRIPTION, configure(parser), run(args) -> int."""
from __future__ import annotations

import os

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
