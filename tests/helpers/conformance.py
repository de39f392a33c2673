"""Where the shared conformance files (check.py, public scenarios) are, when they are present.

They live beside the repository (`../shared/conformance`), not inside it: a clone with nothing
beside it has none, and the tests that use them skip with REASON instead of failing collection.
`SKILLC_CONFORMANCE_DIR` points elsewhere (or at a missing path, to force the skip).
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
REASON = ("needs the shared conformance files (check.py and public/*.yaml in ../shared/conformance beside the "
          "repository, or $SKILLC_CONFORMANCE_DIR): they are not part of this repository, so a clone skips these")


@cache
def conformance_dir() -> Path | None:
    """The conformance folder holding check.py, or None when it is absent."""
    given = os.environ.get("SKILLC_CONFORMANCE_DIR")
    folder = Path(given) if given else REPO.parent / "shared" / "conformance"
    return folder if (folder / "check.py").is_file() else None


@cache
def load_checker() -> ModuleType | None:
    """check.py imported as a module, or None when absent."""
    folder = conformance_dir()
    if folder is None:
        return None
    spec = importlib.util.spec_from_file_location("conformance_check", folder / "check.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def public_scenarios() -> list[Path]:
    """The shared public scenario files, sorted; empty when absent."""
    folder = conformance_dir()
    return sorted((folder / "public").glob("*.yaml")) if folder else []


def run_checker(scenario: Path, trace: Path) -> subprocess.CompletedProcess[str] | None:
    """Run check.py on a scenario and its trace; None when check.py is absent (the caller's own
    assertions still ran: the checker only adds its second opinion)."""
    folder = conformance_dir()
    if folder is None:
        return None
    return subprocess.run([sys.executable, str(folder / "check.py"), str(scenario), str(trace)],
                          capture_output=True, text=True)
