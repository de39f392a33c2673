"""Studio sources: directory, SQLite, inline mapping; only ACTIVE records and enabled bindings load."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from skillc.compiler.frontend import check_studio
from skillc.compiler.sources import SourceError, load_studio, studio_from_mapping, write_studio_sqlite

STUDIO = Path(__file__).parents[1] / "fixtures" / "frontend" / "studio"


def test_directory_loads_active_records_only() -> None:
    studio = load_studio(STUDIO)
    assert [a.agent_code for a in studio.agents] == ["billing", "editor"]  # retired is INACTIVE
    assert [s.skill_key for s in studio.skills] == ["cms.article.create", "cms.space.lookup", "inv.invoice.issue"]
    editor = next(a for a in studio.agents if a.agent_code == "editor")
    assert editor.skills == ["cms.space.lookup", "cms.article.create"]  # binding to the INACTIVE skill dropped
    assert editor.mission_desc == "Creates articles in spaces."
    create = next(s for s in studio.skills if s.skill_key == "cms.article.create")
    assert create.tool_names == ["cms_article_create", "cms_article_get", "cms_space_list"]
    assert create.skill_manual.startswith("Create the article")
    contract_file = STUDIO / "skills" / "cms.article.create" / "contract.jsonc"
    assert create.skill_contract == contract_file.read_text(encoding="utf-8")
    assert create.source is not None and create.source.contract_file == str(contract_file)


def test_directory_diagnostics_point_into_contract_file(tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "studio"
    shutil.copytree(STUDIO, root)
    path = root / "skills" / "inv.invoice.issue" / "contract.jsonc"
    path.write_text(path.read_text(encoding="utf-8").replace('"op": "IN"', '"op": "in"'), encoding="utf-8")
    result = check_studio(load_studio(root))
    (d,) = result.rejected["inv.invoice.issue"]
    assert d.file == str(path) and d.code == "SC113" and (d.line, d.column) == (12, 41)
    assert set(result.contracts) == {"cms.article.create", "cms.space.lookup"}


def test_sqlite_round_trip(tmp_path: Path) -> None:
    studio = load_studio(STUDIO)
    db = tmp_path / "studio.db"
    write_studio_sqlite(studio, db)
    again = load_studio(db)
    assert [a.agent_code for a in again.agents] == [a.agent_code for a in studio.agents]
    assert [(s.skill_key, s.tool_names, s.skill_contract) for s in again.skills] == [(s.skill_key, s.tool_names, s.skill_contract) for s in studio.skills]
    assert [a.skills for a in again.agents] == [a.skills for a in studio.agents]
    result = check_studio(again)
    assert set(result.contracts) == {"cms.article.create", "cms.space.lookup", "inv.invoice.issue"}


def test_sqlite_respects_status_and_enabled_flag(tmp_path: Path) -> None:
    db = tmp_path / "studio.db"
    write_studio_sqlite(load_studio(STUDIO), db)
    con = sqlite3.connect(db)
    con.execute("UPDATE skill_profile SET status = 'DRAFT' WHERE skill_key = 'inv.invoice.issue'")
    con.execute("UPDATE skill_tool_binding SET enabled_flag = 0 WHERE tool_name = 'cms_space_list' AND skill_id = "
                "(SELECT id FROM skill_profile WHERE skill_key = 'cms.article.create')")
    con.execute("UPDATE agent_skill_binding SET enabled_flag = 0 WHERE skill_id = (SELECT id FROM skill_profile WHERE skill_key = 'cms.space.lookup')")
    con.execute("UPDATE skill_profile SET skill_contract = '{\"mode\": \"react\"}' WHERE skill_key = 'cms.space.lookup'")
    con.commit()
    con.close()
    studio = load_studio(db)
    assert [s.skill_key for s in studio.skills] == ["cms.article.create", "cms.space.lookup"]
    create = studio.skills[0]
    assert create.tool_names == ["cms_article_create", "cms_article_get"]
    assert [a.skills for a in studio.agents] == [[], ["cms.article.create"]]
    result = check_studio(studio)
    (d,) = result.rejected["cms.space.lookup"]
    assert d.file == f"{db}#cms.space.lookup" and (d.line, d.column) == (1, 10)  # inside the column's text


def test_inline_mapping() -> None:
    data = {
        "agents": [{"agent_code": "editor", "status": "ACTIVE", "skills": ["cms.x"]}],
        "skills": [{"skill_key": "cms.x", "status": "ACTIVE", "tools": ["t"],
                    "contract": '{\n  "tools": {"t": {"sideEffect": "WRITE"}}\n}\n'}],
    }
    studio = studio_from_mapping(data, origin="scenario.yaml")
    result = check_studio(studio)
    (d,) = result.rejected["cms.x"]
    assert (d.code, d.file, d.line, d.column) == ("SC106", "scenario.yaml#cms.x", 2, 13)


@pytest.mark.parametrize("data,fragment", [
    ([], "must be a mapping"),
    ({"skills": {"a": 1}}, "must be lists"),
    ({"skills": [{"status": "ACTIVE"}]}, "needs a skill_key"),
    ({"skills": [{"skill_key": "a", "contract": {"tools": {}}}]}, "contract must be the contract's text"),
    ({"agents": [{"skills": []}]}, "needs an agent_code"),
])
def test_inline_mapping_errors(data: object, fragment: str) -> None:
    with pytest.raises(SourceError, match=fragment):
        studio_from_mapping(data, origin="s.yaml")  # type: ignore[arg-type]


def test_unreadable_sources(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file"):
        load_studio(tmp_path / "missing")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(SourceError, match="not a studio directory or SQLite database"):
        load_studio(tmp_path / "notes.txt")
    with pytest.raises(SourceError, match="not a studio directory"):
        load_studio(tmp_path)
    db = tmp_path / "empty.db"
    sqlite3.connect(db).execute("CREATE TABLE x (id INTEGER)").connection.close()
    with pytest.raises(SourceError, match="not a studio database"):
        load_studio(db)
    bad = tmp_path / "s"
    (bad / "agents").mkdir(parents=True)
    (bad / "agents" / "a.yaml").write_text("skills: [a\n")
    # an agent file that is not YAML is that record unreadable (SC507), not the whole studio
    (refusal,) = load_studio(bad).refused
    assert refusal.code == "SC507" and refusal.file.endswith("a.yaml") and refusal.line == 2
    assert "invalid YAML" in refusal.message
