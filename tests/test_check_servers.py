"""`skillc check --servers` against real MCP server processes: the example CMS and invoicing
servers, and a small server whose tools carry MCP annotations."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from skillc.main import run as skillc

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
ANNOTATED = Path(__file__).parent / "helpers" / "mcp_servers" / "annotated_server.py"

# A generous connect timeout: on a loaded machine starting a Python MCP server can take seconds.
SLOW_START = "\n[mcp]\nconnect_timeout = 90\n"

EXAMPLE_SERVERS = SLOW_START + f"""
[mcp.servers.cms]
command = {json.dumps(sys.executable)}
args = ["-m", "skillc.examples.cms_server"]
env = {{ CMS_DB = "{{tmp}}/cms.sqlite" }}

[mcp.servers.invoice]
command = {json.dumps(sys.executable)}
args = ["-m", "skillc.examples.invoice_server"]
env = {{ INVOICE_DB = "{{tmp}}/invoice.sqlite" }}
"""


def project(tmp_path: Path, servers: str) -> Path:
    """A copy of the example studio and a skillc.toml with `servers`; returns the config path."""
    shutil.copytree(EXAMPLES / "studio", tmp_path / "studio")
    config = tmp_path / "skillc.toml"
    config.write_text('[studio]\nsource = "studio"\n' + servers, encoding="utf-8")
    return config


def run_json(config: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict, str]:
    status = skillc(["check", "--servers", "--config", str(config), "--format", "json", *extra])
    captured = capsys.readouterr()
    return status, json.loads(captured.out), captured.err


def test_the_example_studio_matches_its_servers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project(tmp_path, EXAMPLE_SERVERS)
    assert skillc(["check", "--servers", "--config", str(config), "--strict"]) == 0
    out = capsys.readouterr().out
    assert "server cms: 16 tools: cms_article_check, cms_article_create," in out
    assert "server invoice: 6 tools: inv_invoice_find," in out
    assert "0 errors, 0 warnings" in out


def test_a_tool_no_server_serves_is_a_warning_at_its_tools_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project(tmp_path, EXAMPLE_SERVERS)
    meta = tmp_path / "studio" / "skills" / "cms.space.lookup" / "skill.yaml"
    lines = meta.read_text(encoding="utf-8").splitlines()
    row = next(i for i, line in enumerate(lines) if "cms_space_list" in line)
    col = lines[row].index("cms_space_list") + 1
    meta.write_text(meta.read_text(encoding="utf-8").replace("cms_space_list", "cms_spaces_list"), encoding="utf-8")
    contract = meta.parent / "contract.jsonc"
    contract.write_text(contract.read_text(encoding="utf-8").replace("cms_space_list", "cms_spaces_list"), encoding="utf-8")
    status, doc, err = run_json(config, capsys)
    hits = [d for d in doc["diagnostics"] if d["code"] == "SC601"]
    assert len(hits) == 1, doc["diagnostics"]
    d = hits[0]
    assert (d["severity"], d["file"], d["line"], d["column"]) == ("warning", str(meta), row + 1, col)
    assert d["help"] == "did you mean 'cms_space_list'?"
    assert status == 0 and "server cms: 16 tools" in err  # listings go to stderr with --format json
    assert run_json(config, capsys, "--strict")[0] == 1


def test_annotations_that_disagree_with_the_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "studio"
    (root / "agents").mkdir(parents=True)
    (root / "agents" / "things.yaml").write_text("agent_name: Things\nstatus: ACTIVE\nskills: [thing.keep]\n")
    skill = root / "skills" / "thing.keep"
    skill.mkdir(parents=True)
    (skill / "skill.yaml").write_text("skill_name: Keep things\nsemantic_desc: Things.\nstatus: ACTIVE\n"
                                      "tools: [thing_get, thing_put, thing_list]\n")
    (skill / "manual.md").write_text("Keep things.\n")
    (skill / "contract.jsonc").write_text(json.dumps({"tools": {
        "thing_get": {"success": {"path": "code", "op": "EQ", "value": 200}},
        "thing_put": {"sideEffect": "WRITE", "args": {"id": {"sources": ["USER"]}},
                      "success": {"path": "code", "op": "EQ", "value": 200}},
        "thing_list": {}}}, indent=2))
    config = tmp_path / "skillc.toml"
    config.write_text(f'[studio]\nsource = "studio"\n{SLOW_START}[mcp.servers.things]\ncommand = {json.dumps(sys.executable)}\n'
                      f'args = [{json.dumps(str(ANNOTATED))}]\n', encoding="utf-8")
    status, doc, _ = run_json(config, capsys)
    found = {d["code"]: d for d in doc["diagnostics"]}
    assert found["SC602"]["severity"] == "warning" and "thing_get" in found["SC602"]["message"]
    assert (found["SC602"]["line"], found["SC602"]["column"]) == (4, 9)
    assert found["SC603"]["severity"] == "note" and "thing_put" in found["SC603"]["message"]
    assert (found["SC603"]["line"], found["SC603"]["column"]) == (4, 20)
    assert "SC601" not in found and status == 0


def test_a_server_that_does_not_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project(tmp_path, f'[mcp.servers.gone]\ncommand = {json.dumps(sys.executable)}\nargs = ["-c", "raise SystemExit(3)"]\n')
    status, doc, err = run_json(config, capsys)
    assert [d["code"] for d in doc["diagnostics"] if d["code"].startswith("SC6")] == ["SC604"]
    assert "server gone: not listed:" in err and status == 0


def test_no_servers_configured_is_a_bad_invocation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project(tmp_path, "")
    assert skillc(["check", "--servers", "--config", str(config)]) == 2
    assert "configures no [mcp.servers.<name>]" in capsys.readouterr().err
