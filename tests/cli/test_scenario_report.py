"""`skillc scenario run` says why a scenario failed (the studio's diagnostics, the replies, the
trace around the first unmet expectation) and shows the studio's warnings on a passing run."""
from __future__ import annotations

from pathlib import Path

import pytest

from helpers import readme
from skillc.main import run as skillc

CONTRACT = "mystudio/skills/cms.article.lifecycle/contract.jsonc"


@pytest.fixture
def first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The README's first skill and its scenario, in a folder of their own."""
    monkeypatch.chdir(tmp_path)
    for path, body in readme.files(readme.section("Writing a first skill")).items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body, encoding="utf-8")
    return tmp_path


def edit(root: Path, old: str, new: str) -> None:
    text = (root / CONTRACT).read_text(encoding="utf-8")
    assert old in text
    (root / CONTRACT).write_text(text.replace(old, new), encoding="utf-8")


def test_a_failure_shows_the_rejected_skill_the_replies_and_the_trace(first: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    edit(first, '"sources": ["USER"]', '"sources": ["USERS"]')
    assert skillc(["scenario", "run", "first.scenario.yaml"]) == 1
    out = capsys.readouterr().out
    assert f"{CONTRACT}:15:34: error[SC113]: invalid source 'USERS'" in out, out  # the cause, where to fix it
    assert "did you mean 'USER'?" in out
    assert "turn 1: I could not plan this: no agent has a loadable skill" in out  # the reply the user got
    trace = out[out.index("trace of turn 1:"):]
    assert "skill.rejected skill=cms.article.lifecycle diagnostics=SC113" in trace
    assert "task.finished state=FAILED reason=SKILL_NOT_FOUND" in trace


def test_a_pass_still_shows_the_studios_warnings(first: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(first, '"idempotencyKey"', '"idempotencyKeys"')  # the idempotency silently gone
    assert skillc(["scenario", "run", "first.scenario.yaml"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS first-article")
    assert "warning[SC004]: unknown property 'idempotencyKeys'" in out and "did you mean 'idempotencyKey'?" in out


def test_a_clean_pass_is_one_line(first: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert skillc(["scenario", "run", "first.scenario.yaml"]) == 0
    assert capsys.readouterr().out.splitlines()[:-1] == ["PASS first-article (first.scenario.yaml, 22 events)"]
