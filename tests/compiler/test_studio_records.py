"""A record file that is not YAML (SC507): that skill or agent is dropped at its file:line:col and
the rest of the studio is still checked, compiled and loadable (one typo must not hide the
other 99 skills' diagnostics)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillc.main import run as skillc
from skillc.runtime.compiled.loader import load_compiled

STUDIO = Path(__file__).resolve().parents[2] / "examples" / "studio"


def _check(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, dict]:
    status = skillc(["check", str(root)])
    text = capsys.readouterr()
    human = text.out + text.err
    assert "Traceback" not in human, human
    assert skillc(["check", str(root), "--format", "json"]) == status
    return status, human, json.loads(capsys.readouterr().out)


def test_a_skill_yaml_that_is_not_yaml_drops_that_skill_only(studio: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    (studio / "skills" / "cms.article.tag" / "skill.yaml").write_text("skill_key: cms.article.tag\n"
                                                                      "skill_name: [unclosed\n", encoding="utf-8")
    status, human, doc = _check(studio, capsys)
    assert status == 1
    hits = [d for d in doc["diagnostics"] if d["code"] == "SC507"]
    assert len(hits) == 1 and hits[0]["severity"] == "error" and hits[0]["skill"] == "cms.article.tag"
    assert hits[0]["file"].endswith("skill.yaml") and hits[0]["line"] == 3
    assert "skill.yaml:3:1: error[SC507]" in human and "invalid YAML" in human
    out = tmp_path / "compiled"
    assert skillc(["compile", str(studio), "-o", str(out)]) == 1
    capsys.readouterr()
    loaded = load_compiled(str(out))
    everything = {p.name for p in (STUDIO / "skills").iterdir() if (p / "skill.yaml").is_file()}
    assert set(loaded.skills) == everything - {"cms.article.tag"} and "cms.article.tag" in loaded.rejected


def test_an_agent_file_that_is_a_list_drops_that_agent_only(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    victim = sorted((studio / "agents").glob("*.yaml"))[0]
    victim.write_text("- just\n- a list\n", encoding="utf-8")
    status, human, doc = _check(studio, capsys)
    assert status == 1
    hits = [d for d in doc["diagnostics"] if d["code"] == "SC507"]
    assert len(hits) == 1 and hits[0]["file"].endswith(victim.name) and "not a mapping" in hits[0]["message"]
    others = len(list((studio / "agents").glob("*.yaml"))) - 1
    assert f"of {others} agents" in human
