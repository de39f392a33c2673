"""One test per authoring mistake: the diagnostic's code, severity, file:line:col and the exit
status of `skillc check` (and `--strict`), on a copy of a clean directory studio."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from skillc.main import run as skillc

CLEAN = Path(__file__).parents[1] / "fixtures" / "frontend" / "studio"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"


@pytest.fixture
def studio(tmp_path: Path) -> Path:
    root = tmp_path / "studio"
    shutil.copytree(CLEAN, root)
    return root


def check(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, list[dict]]:
    """Run `skillc check` twice (human, json): the status, the human text, the json diagnostics."""
    status = skillc(["check", str(root), *extra])
    human = capsys.readouterr().out
    assert skillc(["check", str(root), "--format", "json", *extra]) == status
    doc = json.loads(capsys.readouterr().out)
    assert "Traceback" not in human and "internal error" not in human
    return status, human, doc["diagnostics"]


def one(diags: list[dict], code: str) -> dict:
    hits = [d for d in diags if d["code"] == code]
    assert len(hits) == 1, [(d["code"], d["message"]) for d in diags]
    return hits[0]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (old, text)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_clean_studio_is_clean_even_strict(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, diags = check(studio, capsys, "--strict")
    assert status == 0 and diags == []


def test_unknown_skill_yaml_key_is_a_warning_with_did_you_mean(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    meta = studio / "skills" / "cms.space.lookup" / "skill.yaml"
    edit(meta, "skill_name: Space lookup", "name: Space lookup")  # README's old wording
    status, human, diags = check(studio, capsys)
    d = one(diags, "SC501")
    assert (d["severity"], d["file"], d["line"], d["column"]) == ("warning", str(meta), 1, 1)
    assert d["help"] == "did you mean 'skill_name'?"
    assert status == 0 and f"{meta}:1:1: warning[SC501]: unknown key 'name' in skill.yaml is ignored" in human
    assert check(studio, capsys, "--strict")[0] == 1


def test_misspelled_agent_key_suggests_the_near_name(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = studio / "agents" / "editor.yaml"
    edit(agent, "mission_desc:", "misson_desc:")
    status, _, diags = check(studio, capsys)
    d = one(diags, "SC501")
    assert (d["file"], d["line"], d["column"], d["help"]) == (str(agent), 3, 1, "did you mean 'mission_desc'?")
    assert status == 0


def test_wrong_type_is_an_error_with_position(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    meta = studio / "skills" / "cms.space.lookup" / "skill.yaml"
    edit(meta, "tools: [cms_space_list]", "tools: cms_space_list")
    status, human, diags = check(studio, capsys)
    d = one(diags, "SC502")
    assert (d["severity"], d["file"], d["line"], d["column"]) == ("error", str(meta), 4, 8)
    assert "'tools' must be a list of names" in d["message"]
    assert status == 1 and "rejected: cms.space.lookup" in human
    assert skillc(["compile", str(studio), "-o", str(studio.parent / "out"), "-q"]) == 1  # compile agrees
    assert "cms.space.lookup" in capsys.readouterr().out


def test_lowercase_status_is_diagnosed(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    meta = studio / "skills" / "cms.space.lookup" / "skill.yaml"
    edit(meta, "status: ACTIVE", "status: active")
    status, _, diags = check(studio, capsys)
    d = one(diags, "SC503")
    assert (d["severity"], d["line"], d["column"]) == ("warning", 3, 9)
    assert "case-sensitive" in d["message"] and d["help"] == "write status: ACTIVE"
    assert status == 0 and check(studio, capsys, "--strict")[0] == 1


def test_missing_manual_is_a_warning(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (studio / "skills" / "cms.space.lookup" / "manual.md").unlink()
    status, _, diags = check(studio, capsys)
    d = one(diags, "SC504")
    assert (d["severity"], d["skill"], d["line"], d["column"]) == ("warning", "cms.space.lookup", 1, 1)
    assert d["file"].endswith("cms.space.lookup/skill.yaml")
    assert status == 0 and check(studio, capsys, "--strict")[0] == 1


def test_skill_manual_inside_skill_yaml_does_not_crash(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    meta = studio / "skills" / "cms.space.lookup" / "skill.yaml"
    meta.write_text(meta.read_text(encoding="utf-8") + "skill_manual: Look it up.\n", encoding="utf-8")
    status, _, diags = check(studio, capsys)
    d = one(diags, "SC505")  # manual.md beside it wins
    assert (d["line"], d["column"]) == (5, 15) and "manual.md" in d["message"]
    assert status == 0
    (studio / "skills" / "cms.space.lookup" / "manual.md").unlink()
    status, _, diags = check(studio, capsys)
    assert status == 0 and not [d for d in diags if d["code"] in ("SC504", "SC505")]  # the yaml manual is used
    assert skillc(["compile", str(studio), "-o", str(studio.parent / "out"), "-q"]) == 0


def test_agent_bound_to_a_folder_without_skill_yaml(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (studio / "skills" / "cms.space.lookup" / "skill.yaml").unlink()
    status, _, diags = check(studio, capsys)
    d = one(diags, "SC301")
    assert d["file"] == str(studio / "agents" / "editor.yaml")
    assert (d["line"], d["column"]) == (8, 10)  # the entry in `skills: [...]`
    assert "has no skill.yaml" in d["message"] and d["help"].startswith("create ")
    assert status == 0


def test_unknown_skill_key_points_at_skills_with_a_near_name(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = studio / "agents" / "billing.yaml"
    edit(agent, "skills: [inv.invoice.issue]", "skills: [inv.invoice.isue]")
    status, human, diags = check(studio, capsys)
    d = one(diags, "SC301")
    assert (d["file"], d["line"], d["column"]) == (str(agent), 4, 10)
    assert d["help"] == "did you mean 'inv.invoice.issue'?"
    d = one(diags, "SC302")
    assert (d["file"], d["line"], d["column"]) == (str(agent), 4, 1)
    assert f"{agent}:4:10: warning[SC301]" in human and " 4 | skills: [inv.invoice.isue]" in human
    # its only skill unknown, the agent can never answer: the check fails without --strict
    assert status == 1 and "error: agent 'billing' has no loadable skill" in human


@pytest.mark.parametrize("old,bad,needle", [
    ('"idempotencyKey"', "idempotencyKeys", "idempotencyKey"),
    ('"success": {"path": "code", "op": "EQ", "value": 200}, "error"', "sucess", "success"),
    ('"label": "Title"', "sensitve", "sensitive"),
    ('"verify": {', "verfy", "verify"),
    ('"title": {"sources"', "source", "sources"),
])
def test_misspelled_rule_key_in_a_contract_is_a_warning(studio: Path, capsys: pytest.CaptureFixture[str], old: str, bad: str,
                                                       needle: str) -> None:
    contract = studio / "skills" / "cms.article.create" / "contract.jsonc"
    text = contract.read_text(encoding="utf-8").replace("\n      \"success\": {\"path\": \"code\", \"op\": \"EQ\", \"value\": 200},\n      \"error\"",
                                                        '\n      "success": {"path": "code", "op": "EQ", "value": 200}, "error"')
    contract.write_text(text, encoding="utf-8")
    new = old.replace(f'"{needle}"', f'"{bad}"') if f'"{needle}"' in old else old + f', "{bad}": true'
    edit(contract, old, new)
    status, _, diags = check(studio, capsys)
    d = next(d for d in diags if d["code"] == "SC004")
    line = next(i for i, ln in enumerate(contract.read_text(encoding="utf-8").splitlines(), 1) if f'"{bad}"' in ln)
    assert (d["severity"], d["file"], d["line"]) == ("warning", str(contract), line)
    assert d["help"] == f"did you mean '{needle}'?"
    assert check(studio, capsys, "--strict")[0] == 1


def test_confirm_misspelled_is_a_warning(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    contract = studio / "skills" / "cms.article.create" / "contract.jsonc"
    edit(contract, '"sideEffect": "WRITE",', '"sideEffect": "WRITE", "confrim": false,')
    status, _, diags = check(studio, capsys)
    d = one(diags, "SC004")
    assert (d["line"], d["column"], d["help"]) == (8, 30, "did you mean 'confirm'?")
    assert status == 0


def test_platform_named_output_and_odd_verify_arg_load_with_warnings(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/interpretations.md: What drops a skill: only §16's rules drop a skill."""
    contract = studio / "skills" / "cms.article.create" / "contract.jsonc"
    edit(contract, '"outputs": {"articleId"', '"outputs": {"organId"')
    edit(contract, '"from": "call.title"', '"from": "shared.title"')
    status, human, diags = check(studio, capsys)
    assert one(diags, "SC117")["severity"] == "warning" and one(diags, "SC118")["severity"] == "warning"
    assert status == 0 and "0 rejected" in human
    assert check(studio, capsys, "--strict")[0] == 1


def test_contract_tool_outside_tool_names(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    meta = studio / "skills" / "cms.article.create" / "skill.yaml"
    text = meta.read_text(encoding="utf-8")
    tools = re.search(r"tools: \[(.*)\]", text)
    assert tools and "cms_article_get" in tools.group(1)
    edit(meta, "cms_article_get", "cms_article_gett")
    status, _, diags = check(studio, capsys)
    d = next(d for d in diags if d["code"] == "SC216")
    assert "cms_article_get" in d["message"] and d["help"] == "did you mean 'cms_article_gett'?"
    assert status == 0


def test_diagnostics_doc_lists_exactly_the_code_table() -> None:
    from skillc.compiler.diagnostics import CODES

    rows = re.findall(r"^\| (SC\d{3}) \| (error|warning|note) \|", DOCS.read_text(encoding="utf-8"), re.M)
    assert sorted(rows) == sorted((code, sev) for code, (sev, _) in CODES.items())
    assert len(rows) == len(set(rows))


def test_make_refuses_a_code_outside_the_table() -> None:
    from skillc.compiler.diagnostics import make

    with pytest.raises(ValueError):
        make("SC999", "error", "x", text=None, span=None, skill=None, file=None)
    with pytest.raises(ValueError):
        make("SC001", "error", "x", text=None, span=None, skill=None, file=None)  # SC001 is a note


def test_every_code_spelled_in_the_sources_is_in_the_table() -> None:
    from skillc.compiler.diagnostics import CODES

    root = Path(__file__).resolve().parents[2]
    used: set[str] = set()
    for folder in ("compiler", "cli"):
        for path in (root / folder).rglob("*.py"):
            used |= set(re.findall(r"\bSC\d{3}\b", path.read_text(encoding="utf-8")))
    assert used <= set(CODES), sorted(used - set(CODES))


def test_the_contract_reference_names_every_property() -> None:
    from skillc.compiler import parse

    reference = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "contract.md").read_text(encoding="utf-8")
    names = set()
    for attr in dir(parse):
        value = getattr(parse, attr)
        if attr.endswith("_KEYS") and isinstance(value, frozenset):
            names |= value
    assert {"sideEffect", "idempotencyKey", "verify", "minItems", "scalar"} <= names
    missing = sorted(n for n in names if f"`{n}`" not in reference)
    assert missing == [], missing


@pytest.mark.parametrize("argv,hint", [
    (["explain", "cms.article.lifecyle"], "did you mean 'cms.article.lifecycle'?"),
    (["graph", "editr"], "did you mean 'editor'?"),
])
def test_unknown_keys_on_the_command_line_get_a_near_name(argv: list[str], hint: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    studio = Path(__file__).resolve().parents[2] / "examples" / "studio"
    assert skillc([*argv, str(studio)]) == 2
    assert hint in capsys.readouterr().err


def test_an_unknown_provider_gets_a_near_name(studio: Path) -> None:
    contract = studio / "skills" / "cms.article.create" / "contract.jsonc"
    edit(contract, '"provider": "cms.space.lookup"', '"provider": "cms.space.lokup"')
    from skillc.compiler import graphs
    from skillc.compiler.frontend import check_studio
    from skillc.compiler.sources import load_studio

    loaded = load_studio(studio)
    result = check_studio(loaded)
    facts = {k: graphs.skill_facts(next(s for s in loaded.skills if s.skill_key == k), c) for k, c in result.contracts.items()}
    editor = next(a for a in loaded.agents if a.agent_code == "editor")
    _, diags = graphs.build_agent_graph(editor, facts, set(facts))
    hits = [d for d in diags if d.code == "SC401"]
    assert hits and hits[0].help == "did you mean 'cms.space.lookup'?"


def test_agent_file_mistakes(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = studio / "agents" / "billing.yaml"
    edit(agent, "agent_name: Billing", "name: Billing")
    edit(agent, "status: ACTIVE", "status: Active")
    status, _, diags = check(studio, capsys)
    d = one(diags, "SC501")
    assert (d["file"], d["line"], d["column"], d["help"]) == (str(agent), 1, 1, "did you mean 'agent_name'?")
    d = one(diags, "SC503")
    assert (d["file"], d["line"], d["column"]) == (str(agent), 3, 9)
    assert status == 0 and check(studio, capsys, "--strict")[0] == 1
