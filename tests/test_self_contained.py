"""The repository stands alone: a clone with nothing beside it collects the whole suite and runs
README's test command (on a fast subset), the shared-file tests skipping with their reason.

The clone's tests import the clone's own code: a folder of symlinks lays the clone's top-level
folders out as the one `skillc` package (as setup.py's package_dir does) and goes first on
PYTHONPATH, ahead of this checkout's editable install. SKILLC_IN_CLONE stops the clone from
cloning again.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
ROOTS = {"grammar": "grammar", "compiler": "compiler", "runtime": "runtime", "generated": "generated",
         "examples": "examples"}  # skillc.<name> -> folder; skillc itself is cli/ (setup.py)
FAST = ["tests/test_conformance_public.py", "tests/test_example_studio_shape.py", "tests/cli/test_runner_format.py",
        "-k", "matching_table or durations or public or scenario_01 or well_formed"]

pytestmark = pytest.mark.skipif(bool(os.environ.get("SKILLC_IN_CLONE")), reason="already inside the clone test")


def readme_test_command() -> list[str]:
    """The test command of README's set-up section: the pytest part of its second command."""
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    line = next(line for block in blocks for line in block.splitlines() if "-m pytest" in line)
    return shlex.split(line.split("&&")[-1].strip())


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git clone of this repository's HEAD inside an otherwise empty folder."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout")
    target = tmp_path_factory.mktemp("empty") / "skillc"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(target)], check=True,
                   capture_output=True, text=True)
    assert not (target.parent / "shared").exists()
    package = target.parent / "site" / "skillc"
    package.mkdir(parents=True)
    for entry in (target / "cli").iterdir():
        (package / entry.name).symlink_to(entry)
    for name, folder in ROOTS.items():
        (package / name).symlink_to(target / folder)
    return target


def run_in(clone: Path, extra: list[str]) -> subprocess.CompletedProcess[str]:
    """README's test command, with `extra` arguments, run inside the clone."""
    env = {k: v for k, v in os.environ.items() if k not in ("SKILLC_CONFORMANCE_DIR", "PYTEST_ADDOPTS")}
    env["SKILLC_IN_CLONE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(clone.parent / "site"), *filter(None, [env.get("PYTHONPATH")])])
    command = readme_test_command()
    assert command[:3] == ["python3", "-m", "pytest"], command
    return subprocess.run([*command, *extra], cwd=clone, env=env, capture_output=True, text=True, timeout=300)


def test_readme_names_a_pytest_command() -> None:
    assert readme_test_command()[:3] == ["python3", "-m", "pytest"]


def test_the_clone_imports_its_own_code(clone: Path) -> None:
    code = "import skillc, skillc.compiler, skillc.runtime; print(skillc.compiler.__file__)"
    done = subprocess.run([sys.executable, "-c", code], cwd=clone, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(clone.parent / "site")})
    assert done.returncode == 0 and done.stdout.startswith(str(clone.parent / "site")), done.stdout + done.stderr


def test_a_clone_collects_the_whole_suite(clone: Path) -> None:
    done = run_in(clone, ["--collect-only", "--snapshot-warn-unused"])  # unused: nothing ran
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"\d+ tests? collected", done.stdout), done.stdout[-2000:]
    assert "error" not in done.stdout.splitlines()[-1].lower(), done.stdout[-2000:]


def test_a_clone_runs_readme_command_and_shared_tests_skip_with_a_reason(clone: Path) -> None:
    done = run_in(clone, ["-rs", *FAST])
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    assert "passed" in out and "failed" not in out
    assert "shared conformance files" in out  # the skip says why


def test_scenario_help_points_at_a_shipped_format_doc(capsys: pytest.CaptureFixture[str]) -> None:
    from skillc.main import run as skillc

    with pytest.raises(SystemExit):
        skillc(["scenario", "run", "--help"])
    text = capsys.readouterr().out
    assert "../shared" not in text and "docs/reference/scenarios.md" in text
    assert (REPO / "docs" / "reference" / "scenarios.md").is_file()


def test_readme_links_only_to_files_that_ship() -> None:
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:]+)\)", text):
        assert (REPO / target).exists(), target
    assert "../shared" not in text  # nothing outside the repository is needed to follow it
