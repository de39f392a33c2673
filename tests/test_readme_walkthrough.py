"""README's "Writing a first skill", followed literally: every file it shows is written where it
says, and every command of its shell block runs and succeeds (check --strict, explain, scenario)."""
from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from helpers import readme
from skillc.main import run as skillc


def section() -> str:
    return readme.section("Writing a first skill")


def files() -> dict[str, str]:
    """`path`: followed by a fenced block -> {path: the block's text}."""
    return readme.files(section())


def commands() -> list[list[str]]:
    found = readme.blocks(section(), "sh")
    assert found, "no shell block in the walk-through"
    return [shlex.split(line) for line in readme.commands(found[0])]


def test_the_walkthrough_shows_the_real_keys() -> None:
    shown = files()
    assert set(shown) == {"mystudio/agents/editor.yaml", "mystudio/skills/cms.article.lifecycle/skill.yaml",
                          "mystudio/skills/cms.article.lifecycle/manual.md",
                          "mystudio/skills/cms.article.lifecycle/contract.jsonc", "first.scenario.yaml"}
    assert "skill_name:" in shown["mystudio/skills/cms.article.lifecycle/skill.yaml"]
    for field in ("agent_name", "identity_desc", "mission_desc", "boundary_desc", "style_desc", "principle_desc"):
        assert f"{field}:" in shown["mystudio/agents/editor.yaml"] and field in section()


def test_following_the_walkthrough_literally_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLC_CONFIG", raising=False)
    for path, body in files().items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body, encoding="utf-8")
    ran = []
    for argv in commands():
        assert argv[0] == "skillc", argv
        status = skillc(argv[1:])
        out = capsys.readouterr()
        assert status == 0, f"{shlex.join(argv)} exited {status}:\n{out.out}{out.err}"
        ran.append((argv[1], out.out))
    assert [name for name, _ in ran] == ["check", "explain", "scenario"]
    assert "1 loaded, 0 rejected; 0 errors, 0 warnings" in ran[0][1]
    assert "from 'platform.organId'" in ran[1][1]
    assert "PASS first-article" in ran[2][1]
