"""mypy --strict over runtime/ and compiler/ finds no error (so CI keeps the seam Protocols and the IR
the code generator narrows honest).

The package is installed editable through a path finder mypy cannot follow, so the test lays out
`skillc/` in a temp folder as symlinks (cli/ is `skillc`, runtime/ is `skillc.runtime`, …) and
checks `-p skillc.runtime` and `-p skillc.compiler` there, and the CLI's consumers and producer of
trace events (the scenario runner, checker and report, the renderer, the demo), so their typed
events are checked too. Settings: tests/typing/mypy.ini.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "tests" / "typing" / "mypy.ini"
SUBPACKAGES = ("runtime", "compiler", "grammar", "examples", "generated")


def package_tree(tmp: Path) -> Path:
    """`tmp/skillc` mirroring the installed package, as symlinks into the checkout."""
    pkg = tmp / "skillc"
    pkg.mkdir()
    for entry in (ROOT / "cli").iterdir():
        if entry.name != "__pycache__":
            (pkg / entry.name).symlink_to(entry)
    for name in SUBPACKAGES:
        if (ROOT / name).is_dir():
            (pkg / name).symlink_to(ROOT / name)
    return tmp


def mypy(tmp: Path, *targets: str) -> subprocess.CompletedProcess[str]:
    """Run mypy over packages (`-p …`) and modules (`-m …`) of the tree."""
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(CONFIG), "--cache-dir",
                           str(tmp / ".mypy_cache"), *targets], cwd=package_tree(tmp),
                          capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
@pytest.mark.parametrize(("targets", "at_least"), [
    (("-p", "skillc.runtime"), 40), (("-p", "skillc.compiler"), 15),
    (("-p", "skillc.scenario", "-m", "skillc.render", "-m", "skillc.demo"), 6),
], ids=["runtime", "compiler", "cli-events"])
def test_package_is_mypy_clean(tmp_path: Path, targets: tuple[str, ...], at_least: int) -> None:
    done = mypy(tmp_path, *targets)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found in" in done.stdout
    checked = int(done.stdout.split("no issues found in ")[1].split()[0])
    assert checked > at_least  # the whole package was checked, not an empty tree
