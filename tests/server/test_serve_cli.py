"""The two commands refuse what they cannot serve, with one line and exit status 2."""
from __future__ import annotations

from pathlib import Path

import pytest

from skillc.main import run


def test_serve_refuses_to_start_without_a_secret(compiled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("SKILLC_GATEWAY_SECRET", raising=False)
    monkeypatch.delenv("SKILLC_SERVE_DEV", raising=False)
    config = tmp_path / "skillc.toml"
    config.write_text(f"[store]\npath = {str(tmp_path / 's.sqlite')!r}\n", encoding="utf-8")
    assert run(["serve", str(compiled), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "no gateway secret" in err and "--dev-insecure" in err
    config.write_text("[server]\nauth = \"maybe\"\n", encoding="utf-8")
    assert run(["serve", str(compiled), "--config", str(config)]) == 2
    assert "auth must be" in capsys.readouterr().err


def test_studio_serve_refuses_an_unreadable_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["studio", "serve", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    assert run(["studio"]) == 2
    assert "skillc studio serve DIR|DB" in capsys.readouterr().err
