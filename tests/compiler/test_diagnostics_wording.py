"""Diagnostics that agree with each other and point where they should: no "has no sources" or
"has no op" beside the SC113 that refused the value, "did you mean" for a near-miss enum value,
and an unchanged compile that still names the file, with its excerpt."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import readme
from skillc.compiler.frontend import check_studio
from skillc.compiler.sources import load_studio
from skillc.main import run as skillc

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = "mystudio/skills/cms.article.lifecycle/contract.jsonc"


@pytest.fixture
def mystudio(tmp_path: Path) -> Path:
    for path, body in readme.files(readme.section("Writing a first skill")).items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body, encoding="utf-8")
    return tmp_path


def codes_after(root: Path, old: str, new: str) -> list[tuple[str, str | None]]:
    path = root / CONTRACT
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    return [(d.code, d.help) for d in check_studio(load_studio(root / "mystudio")).diagnostics if d.skill]


def test_an_unknown_source_is_one_error_with_a_suggestion(mystudio: Path) -> None:
    found = codes_after(mystudio, '"sources": ["USER"]', '"sources": ["USERS"]')
    assert found == [("SC113", "did you mean 'USER'?")], found  # no SC207 "has no sources"


def test_an_unknown_op_is_one_error(mystudio: Path) -> None:
    found = codes_after(mystudio, '"op": "EQ", "value": 200 }\n    }\n  }', '"op": "EQUALS", "value": 200 }\n    }\n  }')
    assert [code for code, _ in found] == ["SC113"], found  # no SC206 "has no op"


def test_an_empty_sources_list_is_still_reported(mystudio: Path) -> None:
    found = codes_after(mystudio, '"sources": ["USER"]', '"sources": []')
    assert [code for code, _ in found] == ["SC207"], found


def test_an_unchanged_compile_shows_the_same_diagnostics(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out_dir = str(tmp_path / "out")
    assert skillc(["compile", "examples/studio", "-o", out_dir]) == 0
    first = capsys.readouterr().out
    assert skillc(["compile", "examples/studio", "-o", out_dir]) == 0
    again = capsys.readouterr().out
    assert "<cms.article.tag>" not in again
    assert "examples/studio/skills/cms.article.tag/contract.jsonc:9:18: note[SC214]" in again
    assert first.splitlines()[:-1] == again.splitlines()[:-1]  # the diagnostics, excerpts included
    assert "0 regenerated, 11 unchanged; 0 files written, 0 removed" in again


def test_a_first_compile_into_a_checked_out_directory_says_its_files_are_current(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    shutil.copytree(ROOT / "generated", tmp_path / "generated", ignore=shutil.ignore_patterns("__pycache__", ".*cache*"))
    assert skillc(["compile", "examples/studio", "-o", str(tmp_path / "generated")]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert "11 skills loaded, 0 rejected, 3 agents; 11 regenerated, 0 unchanged; 0 files written (15 already current)" in last, last
