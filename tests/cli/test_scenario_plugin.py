"""Scenarios whose `studio:` is a studio directory (relative to the scenario file), and the pytest
plugin that runs a user's scenario files as tests, one per file."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from skillc.main import run as skillc

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "03-space-lookup-session-outputs.yaml"


def write_studio(inline: dict[str, Any], root: Path) -> None:
    """An inline scenario studio written out as a directory studio (agents/, skills/)."""
    (root / "agents").mkdir(parents=True)
    for agent in inline["agents"]:
        fields = {k: v for k, v in agent.items() if k != "agent_code"}
        (root / "agents" / f"{agent['agent_code']}.yaml").write_text(yaml.safe_dump(fields, sort_keys=False))
    for skill in inline["skills"]:
        folder = root / "skills" / skill["skill_key"]
        folder.mkdir(parents=True)
        meta = {k: skill[k] for k in ("skill_name", "semantic_desc", "status", "tools")}
        (folder / "skill.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
        (folder / "manual.md").write_text(skill["skill_manual"])
        (folder / "contract.jsonc").write_text(skill["contract"])


@pytest.fixture
def user_project(tmp_path: Path) -> Path:
    """A user's project: studio/ beside scenarios/space.scenario.yaml that points at it."""
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    write_studio(data["studio"], tmp_path / "studio")
    data["studio"] = "../studio"
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "space.scenario.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return tmp_path


def test_a_scenario_runs_against_a_studio_directory(user_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert skillc(["check", str(user_project / "studio"), "--strict"]) == 0
    capsys.readouterr()
    status = skillc(["scenario", "run", str(user_project / "scenarios" / "space.scenario.yaml")])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "PASS space-lookup-session-outputs" in out


def test_a_missing_studio_directory_is_bad_input(user_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = user_project / "scenarios" / "space.scenario.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("studio: ../studio", "studio: ../nowhere"))
    assert skillc(["scenario", "run", str(path)]) == 2
    out = capsys.readouterr().out
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if ln.startswith("studio:"))
    assert f"{path}:{line}: studio: ../nowhere does not exist (looked for" in out


def run_pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "skillc.pytest_plugin", "-p", "no:cacheprovider",
                           "-q", *args], cwd=project, env=env, capture_output=True, text=True, timeout=300)


def test_the_plugin_runs_each_scenario_file_as_one_test(user_project: Path) -> None:
    good = user_project / "scenarios" / "space.scenario.yaml"
    data = yaml.safe_load(good.read_text(encoding="utf-8"))
    data["name"] = "wrong-expectation"
    data["turns"][0]["expect"].append({"type": "tool.call", "tool": "cms_space_list", "evidence": "e99"})
    (user_project / "scenarios" / "bad.scenario.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    (user_project / "scenarios" / "other.yaml").write_text("not: collected\n")  # default pattern: *.scenario.yaml
    done = run_pytest(user_project, "-rA", "--skillc-trace-dir", "traces")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "1 failed, 1 passed" in out, out[-4000:]
    assert "PASSED scenarios/space.scenario.yaml::space-lookup-session-outputs" in out
    assert "FAILED scenarios/bad.scenario.yaml::wrong-expectation" in out
    assert '"evidence": "e99"' in out and "Traceback" not in out  # the runner's report, not a traceback
    assert (user_project / "traces" / "space.scenario.jsonl").stat().st_size > 0


def test_the_plugin_pattern_is_configurable(user_project: Path) -> None:
    (user_project / "scenarios" / "space.scenario.yaml").rename(user_project / "scenarios" / "space.yaml")
    (user_project / "pytest.ini").write_text("[pytest]\nskillc_scenarios = scenarios/*.yaml\n")
    done = run_pytest(user_project, "--collect-only")
    assert "1 test collected" in done.stdout or "1 item" in done.stdout, done.stdout + done.stderr
    assert "space-lookup-session-outputs" in done.stdout


def test_the_installed_plugin_loads_without_p(user_project: Path) -> None:
    """The `pytest11` entry point registers the plugin under its module name: no `-p` needed."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--collect-only"],
                          cwd=user_project, env=env, capture_output=True, text=True, timeout=300)
    assert "space-lookup-session-outputs" in done.stdout, done.stdout + done.stderr


def test_a_scenario_that_cannot_run_is_an_error_not_a_failure(user_project: Path) -> None:
    """Like `skillc scenario run`'s exit 2: a missing studio is the test's set-up failing (ERROR),
    not an expectation that did not hold (FAILED)."""
    path = user_project / "scenarios" / "space.scenario.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("studio: ../studio", "studio: ../nowhere"))
    done = run_pytest(user_project, "-rA")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "1 error" in out and "failed" not in out, out[-4000:]
    assert "ERROR scenarios/space.scenario.yaml::space-lookup-session-outputs" in out
    assert "studio: ../nowhere does not exist" in out and "Traceback" not in out
