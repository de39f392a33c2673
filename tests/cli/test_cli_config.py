"""Every studio command reads ./skillc.toml, --config or $SKILLC_CONFIG, says which studio it read,
and says so when it falls back to the example studio."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillc.main import run as skillc

CLEAN = Path(__file__).parents[1] / "fixtures" / "frontend" / "studio"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's folder: their studio and a skillc.toml naming it; the working directory."""
    shutil.copytree(CLEAN, tmp_path / "mystudio")
    (tmp_path / "skillc.toml").write_text('[studio]\nsource = "mystudio"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLC_CONFIG", raising=False)
    return tmp_path


@pytest.mark.parametrize("argv", [["check"], ["compile", "-o", "out", "-q"], ["explain", "cms.space.lookup"],
                                  ["graph", "editor"]])
def test_every_command_reads_the_local_skillc_toml(project: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert skillc(argv) == 0
    err = capsys.readouterr().err
    assert f"skillc {argv[0]}: studio {project / 'mystudio'} (from skillc.toml)" in err


def test_check_summary_names_the_users_studio(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert skillc(["check"]) == 0
    assert f"in {project / 'mystudio'}: 3 loaded" in capsys.readouterr().out


def test_config_option_and_environment(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "skillc.toml").write_text('[studio]\nsource = "../mystudio"\n', encoding="utf-8")
    (project / "skillc.toml").unlink()
    assert skillc(["check", "--config", str(other / "skillc.toml")]) == 0
    assert f"(from --config {other / 'skillc.toml'})" in capsys.readouterr().err
    monkeypatch.setenv("SKILLC_CONFIG", str(other / "skillc.toml"))
    assert skillc(["check"]) == 0
    captured = capsys.readouterr()
    assert f"(from $SKILLC_CONFIG {other / 'skillc.toml'})" in captured.err
    assert "3 loaded" in captured.out


def test_fallback_to_the_example_is_said(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "skillc.toml").unlink()
    assert skillc(["check"]) == 0
    err = capsys.readouterr().err
    assert "no skillc.toml here and no --config: using the example studio" in err
    (project / "skillc.toml").write_text("[store]\npath = 'x.db'\n", encoding="utf-8")
    assert skillc(["check"]) == 0
    assert "skillc.toml sets no [studio] source: using the example studio" in capsys.readouterr().err


def test_a_bad_config_is_a_one_line_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "skillc.toml").write_text("[studio\n", encoding="utf-8")
    assert skillc(["check"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("skillc check: error:") and "skillc.toml" in err and "Traceback" not in err
    assert skillc(["check", "--config", str(project / "missing.toml")]) == 2
    assert "missing.toml" in capsys.readouterr().err


def test_an_explicit_source_wins_over_the_config(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "skillc.toml").write_text('[studio]\nsource = "nowhere"\n', encoding="utf-8")
    assert skillc(["check", str(project / "mystudio")]) == 0
