"""The studio a replay judges with: a compiled directory as it is, or a studio source compiled
into a temporary directory for this replay (the compiler is imported only then)."""
from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skillc.runtime.words.errors import SkillcError


class StudioUnavailable(SkillcError):
    """The studio (or the config naming it) cannot be read or compiled."""


@contextlib.contextmanager
def open_studio(args: argparse.Namespace) -> Iterator[tuple[Any, str, Any]]:
    """(the loaded studio, its name for the report, the config's settings)."""
    from skillc.commands import choose_studio, read_config
    from skillc.runtime.compiled.loader import CompiledStudioError, load_compiled

    config = read_config("replay", args.config)
    if config is None:
        raise StudioUnavailable(f"cannot read the config {args.config or ''}".strip())
    if args.compiled:
        try:
            yield load_compiled(args.compiled), args.compiled, config.settings
        except CompiledStudioError as exc:
            raise StudioUnavailable(str(exc)) from None
        return
    source = args.studio or choose_studio("replay", None, args.config, config)
    if source is None:
        raise StudioUnavailable("no studio")
    if (Path(source) / "manifest.json").exists():
        yield load_compiled(source), source, config.settings
        return
    with tempfile.TemporaryDirectory(prefix="skillc-replay-") as tmp:
        studio = _compile(source, Path(tmp))
        yield studio, source, config.settings


def _compile(source: str, out: Path) -> Any:
    from skillc.compiler.build import compile_studio
    from skillc.compiler.sources import SourceError
    from skillc.runtime.compiled.loader import load_compiled

    try:
        result = compile_studio(source, out)
    except (SourceError, OSError) as exc:
        raise StudioUnavailable(f"studio {source}: {exc}") from None
    for key, diags in sorted(result.rejected.items()):
        first = diags[0].get("message", "") if diags else ""
        print(f"skillc replay: skill {key} is rejected and judges nothing: {first} (skillc check {source})",
              file=sys.stderr)
    return load_compiled(out)
