"""What session-level tests over the example studio share: the studio compiled and loaded, and a
gateway with no tools (the model double never reaches a business tool)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from skillc.compiler import compile_studio
from skillc.runtime import load_compiled

ROOT = Path(__file__).resolve().parents[2]


class NoTools:
    """A gateway with an empty catalog (the model double never reaches a business tool)."""

    catalog: dict[str, Any] = {}
    on_invoked = None

    async def call(self, tool: str, args: dict[str, Any], timeout: float | None = None) -> Any:
        raise AssertionError(f"unexpected call of {tool}")


def example_studio(out: Path) -> Any:
    """The bundled example studio compiled into `out` and loaded."""
    compile_studio(ROOT / "examples" / "studio", out)
    return load_compiled(out)
