"""`skillc check` exits 1 without --strict when the studio cannot work as written: an agent left
with no loadable skill, or a write no call can ever pass; the message says what the run will do."""
from __future__ import annotations

from pathlib import Path

import pytest

from helpers import readme
from skillc.main import run as skillc

SKILL = "mystudio/skills/cms.article.lifecycle"


@pytest.fixture
def mystudio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The README's first studio, written as it shows it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLC_CONFIG", raising=False)
    for path, body in readme.files(readme.section("Writing a first skill")).items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body, encoding="utf-8")
    return tmp_path


def edit(root: Path, path: str, old: str, new: str) -> None:
    text = (root / path).read_text(encoding="utf-8")
    assert old in text
    (root / path).write_text(text.replace(old, new), encoding="utf-8")


def check(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = skillc(["check", "mystudio"])
    return status, capsys.readouterr().out


def test_the_readme_studio_passes(mystudio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = check(capsys)
    assert status == 0 and "error:" not in out, out
    assert "checked 1 skill of 1 agent in mystudio" in out  # item 8: no "1 skills"


@pytest.mark.parametrize("path,old,new", [
    (f"{SKILL}/skill.yaml", "status: ACTIVE", "status: active"),  # the skill silently does not load
    ("mystudio/agents/editor.yaml", "[cms.article.lifecycle]", "[cms.article.lifecyle]"),  # a misspelled key
])
def test_an_agent_with_no_loadable_skill_fails_the_check(mystudio: Path, capsys: pytest.CaptureFixture[str],
                                                        path: str, old: str, new: str) -> None:
    edit(mystudio, path, old, new)
    status, out = check(capsys)
    assert status == 1, out
    assert "0 errors, 2 warnings" in out  # the diagnostics themselves are unchanged
    assert ("error: agent 'editor' has no loadable skill: at run time every request routed to it fails at "
            "planning") in out.splitlines()[-1]


def test_a_write_that_can_never_run_fails_the_check(mystudio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(mystudio, f"{SKILL}/skill.yaml", "[cms_space_list, cms_article_create]", "[cms_article_create]")
    status, out = check(capsys)
    assert status == 1, out
    last = out.splitlines()[-1]
    assert last.startswith("error: skill 'cms.article.lifecycle': the write 'cms_article_create' can never run: "
                           "its argument 'spaceId' must come from EVIDENCE"), last
    assert "'cms_space_list' is not in the skill's tools:" in last and "PARAM_PROVENANCE_REJECTED" in last


def test_a_write_with_another_source_still_passes(mystudio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """EVIDENCE or USER: the user can still name the space, so nothing is certain to fail."""
    edit(mystudio, f"{SKILL}/skill.yaml", "[cms_space_list, cms_article_create]", "[cms_article_create]")
    edit(mystudio, f"{SKILL}/contract.jsonc", '"sources": ["EVIDENCE"]', '"sources": ["EVIDENCE", "USER"]')
    status, out = check(capsys)
    assert status == 0 and "can never run" not in out, out


def test_json_lists_the_blockers(mystudio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    edit(mystudio, f"{SKILL}/skill.yaml", "status: ACTIVE", "status: active")
    assert skillc(["check", "mystudio", "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [b.split(":")[0] for b in doc["blockers"]] == ["agent 'editor' has no loadable skill"]


def test_evidence_another_skill_of_the_agent_can_supply_is_not_a_blocker(mystudio: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A lookup skill beside it may run first (a provider, a delegate): its evidence is upstream."""
    edit(mystudio, f"{SKILL}/skill.yaml", "[cms_space_list, cms_article_create]", "[cms_article_create]")
    lookup = mystudio / "mystudio" / "skills" / "cms.space.lookup"
    lookup.mkdir()
    (lookup / "skill.yaml").write_text("skill_name: Space lookup\nsemantic_desc: Lists the CMS spaces.\n"
                                       "status: ACTIVE\ntools: [cms_space_list]\n", encoding="utf-8")
    (lookup / "manual.md").write_text("Call `cms_space_list`, then finish with the spaces.\n", encoding="utf-8")
    (lookup / "contract.jsonc").write_text('''{"tools": {"cms_space_list": {
      "args": {"organId": {"from": "platform.organId"}},
      "success": {"path": "code", "op": "EQ", "value": 200},
      "extracts": [{"key": "spaces", "path": "data"}]}}}''', encoding="utf-8")
    edit(mystudio, "mystudio/agents/editor.yaml", "[cms.article.lifecycle]", "[cms.article.lifecycle, cms.space.lookup]")
    status, out = check(capsys)
    assert "can never run" not in out and status == 0, out
