"""`skillc diff`: one fixture pair per risky change kind, harmless changes, the inputs it takes
(studio, compiled directory, git REV:PATH) and the CLI's formats and exit statuses."""
from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from skillc.compiler import build
from skillc.compiler.diff import DiffInputError, diff
from skillc.main import run as cli

BASE: dict[str, Any] = {
    "target": "save",
    "outputs": {"docId": {"sources": ["EVIDENCE"]}},
    "tools": {
        "save": {
            "sideEffect": "WRITE",
            "idempotencyKey": ["title", "space"],
            "args": {
                "title": {"sources": ["USER"], "label": "Title"},
                "space": {"from": "platform.organId"},
                "level": {"sources": ["USER"], "enum": ["LOW", "HIGH"]},
                "pin": {"sources": ["USER"], "sensitive": True},
                "note": {"sources": ["EVIDENCE"]},
                "ref": {"sources": ["EVIDENCE"], "evidence": "docs[].id"},
            },
            "success": {"path": "code", "op": "EQ", "value": 0},
            "verify": {"tool": "get"},
        },
        "touch": {"sideEffect": "WRITE", "idempotencyKey": ["id"], "args": {"id": {"sources": ["EVIDENCE"]}},
                  "success": {"path": "code", "op": "EQ", "value": 0}},
        "get": {"args": {"id": {"sources": ["EVIDENCE"]}}, "success": {"path": "data", "op": "TRUTHY"},
                "extracts": [{"key": "docs", "path": "data"}]},
        "list": {"success": {"path": "code", "op": "IN", "value": [0, 1]}},
    },
}
TOOLS = ["save", "touch", "get", "list"]


def _write_studio(root: Path, contract: dict[str, Any], tools: list[str] = TOOLS, key: str = "fx.doc") -> Path:
    (root / "agents").mkdir(parents=True, exist_ok=True)
    (root / "agents" / "main.yaml").write_text(yaml.safe_dump({"agent_name": "Main", "skills": [key]}))
    skill = root / "skills" / key
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "skill.yaml").write_text(yaml.safe_dump({"skill_name": "Doc", "tools": tools}))
    (skill / "contract.jsonc").write_text(json.dumps(contract, indent=2))
    return root


def _edit(fn: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    contract = copy.deepcopy(BASE)
    fn(contract)
    return contract


def _tools(c: dict[str, Any]) -> dict[str, Any]:
    return c["tools"]


RISKY: dict[str, Callable[[dict[str, Any]], None]] = {
    "arg.accepts_model": lambda c: _tools(c)["save"]["args"]["title"]["sources"].append("MODEL"),
    "arg.sources_widened": lambda c: _tools(c)["save"]["args"]["note"]["sources"].append("SESSION"),
    "arg.unbound": lambda c: _tools(c)["save"]["args"].update(space={"sources": ["EVIDENCE"]}),
    "arg.bind_source": lambda c: _tools(c)["save"]["args"].update(space={"from": "session.spaceId"}),
    "arg.enum_removed": lambda c: _tools(c)["save"]["args"]["level"].pop("enum"),
    "arg.enum_widened": lambda c: _tools(c)["save"]["args"]["level"]["enum"].append("MID"),
    "arg.optional": lambda c: _tools(c)["save"]["args"]["title"].update(required=False),
    "arg.not_sensitive": lambda c: _tools(c)["save"]["args"]["pin"].pop("sensitive"),
    "arg.removed": lambda c: _tools(c)["save"]["args"].pop("note"),
    "arg.evidence_removed": lambda c: _tools(c)["save"]["args"]["ref"].pop("evidence"),
    "arg.evidence_widened": lambda c: _tools(c)["save"]["args"]["ref"].update(evidence=["docs[].id", "get:data[].title"]),
    "tool.not_write": lambda c: _tools(c)["touch"].update(sideEffect="NONE", idempotencyKey=[]),
    "tool.no_approval": lambda c: _tools(c)["save"].update(confirm=False),
    "tool.no_idempotency_key": lambda c: _tools(c)["save"].pop("idempotencyKey"),
    "tool.idempotency_key": lambda c: _tools(c)["save"].update(idempotencyKey=["title"]),
    "tool.verify_removed": lambda c: _tools(c)["save"].pop("verify"),
    "tool.success_loosened": lambda c: _tools(c)["save"].update(success={"path": "code", "op": "IN", "value": [0, 409]}),
    "tool.success_changed": lambda c: _tools(c)["save"].update(success={"path": "status", "op": "EQ", "value": 0}),
    "tool.contract_removed": lambda c: _tools(c).pop("list"),
    "skill.target": lambda c: c.pop("target"),
    "skill.fails_to_load": lambda c: c.update(mode="SOMETIMES"),
    "output.changed": lambda c: c["outputs"]["docId"]["sources"].append("MODEL"),
}

LOOSER_SUCCESS = [
    {"path": "code", "op": "EXISTS"},  # EQ -> EXISTS
    {"path": "code", "op": "TRUTHY"},
    {"path": "code"},  # no op: any non-empty response
    None,  # success removed
]


@pytest.fixture
def old(tmp_path: Path) -> Path:
    return _write_studio(tmp_path / "old", BASE)


@pytest.mark.parametrize("kind", sorted(RISKY))
def test_each_risky_kind(kind: str, old: Path, tmp_path: Path) -> None:
    new = _write_studio(tmp_path / "new", _edit(RISKY[kind]))
    changes = diff(str(old), str(new))
    found = [c for c in changes if c.kind == kind]
    assert found and all(c.risky for c in found), [(c.kind, c.risky, c.message) for c in changes]
    # the reverse edit is not risky for the same reason (a change of unknown direction is)
    back = [c for c in diff(str(new), str(old)) if c.kind == kind]
    assert not any(c.risky for c in back) or kind == "tool.success_changed", back


def test_new_tool_in_tool_names_is_risky(old: Path, tmp_path: Path) -> None:
    new = _write_studio(tmp_path / "new", BASE, [*TOOLS, "drop_all"])
    (change,) = diff(str(old), str(new))
    assert (change.kind, change.tool, change.risky) == ("skill.tool_added", "drop_all", True)
    assert "no contract" in change.message


@pytest.mark.parametrize("success", LOOSER_SUCCESS, ids=["exists", "truthy", "no-op", "removed"])
def test_looser_success_rules(success: dict[str, Any] | None, old: Path, tmp_path: Path) -> None:
    contract = copy.deepcopy(BASE)  # "list" succeeds when code IN [0, 1]
    if success is None:
        del contract["tools"]["list"]["success"]
    else:
        contract["tools"]["list"]["success"] = success
    new = _write_studio(tmp_path / "new", contract)
    kinds = {(c.kind, c.risky) for c in diff(str(old), str(new))}
    assert ("tool.success_loosened", True) in kinds


def test_harmless_changes_are_not_risky(old: Path, tmp_path: Path) -> None:
    def harmless(c: dict[str, Any]) -> None:
        c["tools"]["save"]["args"]["title"]["label"] = "Headline"
        c["tools"]["save"]["args"]["title"]["sources"] = ["USER"]
        c["tools"]["list"]["success"]["value"] = [0]  # IN with fewer values: tightened
        c["tools"]["get"]["args"]["id"]["sources"] = []  # narrower
    new = _write_studio(tmp_path / "new", _edit(harmless))
    changes = diff(str(old), str(new))
    assert {c.kind for c in changes} == {"arg.label", "tool.success_tightened", "arg.sources_narrowed"}
    assert not any(c.risky for c in changes)
    assert diff(str(old), str(old)) == []


def test_compiled_directories_and_studios_read_the_same(old: Path, tmp_path: Path) -> None:
    new = _write_studio(tmp_path / "new", _edit(RISKY["tool.no_approval"]))
    build.compile_studio(new, tmp_path / "compiled")
    assert diff(str(old), str(tmp_path / "compiled")) == diff(str(old), str(new))


def test_git_revision_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    studio = _write_studio(repo / "studio", BASE)

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    _write_studio(studio, _edit(RISKY["tool.verify_removed"]))
    git("commit", "-q", "-am", "two")
    changes = diff("HEAD~1:studio", "studio", cwd=repo)
    assert [(c.kind, c.tool) for c in changes] == [("tool.verify_removed", "save")]
    monkeypatch.chdir(repo)
    assert cli(["diff", "HEAD~1:studio", "HEAD:studio", "--fail-on", "risky"]) == 1
    assert "RISKY save: verify get removed" in capsys.readouterr().out
    assert cli(["diff", "HEAD~5:studio", "studio"]) == 2
    assert "not a git revision" in capsys.readouterr().err
    with pytest.raises(DiffInputError):
        diff("HEAD:nowhere", "studio", cwd=repo)


def test_cli_formats_and_exit_statuses(old: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = _write_studio(tmp_path / "new", _edit(RISKY["arg.accepts_model"]))
    assert cli(["diff", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("fx.doc: 1 change, 1 risky\n") and "RISKY save.title: now accepts MODEL values" in out
    assert cli(["diff", str(old), str(new), "--format", "json", "--fail-on", "risky"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["risky"] == 1 and data["changes"][0]["kind"] == "arg.accepts_model" and data["changes"][0]["arg"] == "title"
    assert cli(["diff", str(old), str(old), "--fail-on", "any"]) == 0
    assert capsys.readouterr().out == "no behaviour changes\n"
    assert cli(["diff", str(old), str(tmp_path / "missing")]) == 2
    with pytest.raises(SystemExit):
        cli(["diff", "--help"])
    assert "HEAD~1:examples/studio" in capsys.readouterr().out


def test_agents_offering_a_skill_and_unreadable_modules(old: Path, tmp_path: Path) -> None:
    new = _write_studio(tmp_path / "new", BASE)
    (new / "agents" / "other.yaml").write_text(yaml.safe_dump({"agent_name": "Other", "skills": ["fx.doc"]}))
    assert [(c.kind, c.message) for c in diff(str(old), str(new))] == [("agent.skill_added", "now offered by agent other")]
    compiled = tmp_path / "compiled"
    build.compile_studio(old, compiled)
    module = compiled / "skills" / "fx.doc.py"
    module.write_text(module.read_text().replace("SKILL = rt.SkillMeta(", "SKILL = make_skill("))
    (change,) = diff(str(old), str(compiled))
    assert change.kind == "skill.unreadable" and change.risky and "new module cannot be read" in change.message
