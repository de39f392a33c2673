"""`skillc check --servers` against real MCP server processes: the example CMS and invoicing
servers, and a small server whose tools carry MCP annotations."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from helpers.things_studio import SLOW_START, annotated, things_studio
from skillc.main import run as skillc

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


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


_things_studio, _annotated = things_studio, annotated


def test_annotations_that_disagree_with_the_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _things_studio(tmp_path, {"tools": {
        "thing_get": {"success": {"path": "code", "op": "EQ", "value": 200}},
        "thing_put": {"sideEffect": "WRITE", "args": {"id": {"sources": ["USER"]}},
                      "success": {"path": "code", "op": "EQ", "value": 200}},
        "thing_list": {}}}, _annotated("things"))
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
    assert "server gone: not listed (" in err and status == 0


def test_no_servers_configured_is_a_bad_invocation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project(tmp_path, "")
    assert skillc(["check", "--servers", "--config", str(config)]) == 2
    assert "configures no [mcp.servers.<name>]" in capsys.readouterr().err


def test_two_servers_with_one_tool_name_is_the_error_serve_refuses(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    from skillc.runtime.outside.config import load_config
    from skillc.runtime.mcp.gateway import GatewayConfigError, McpGateway

    config = _things_studio(tmp_path, {"tools": {"thing_list": {}}}, _annotated("left") + _annotated("right"))
    status, doc, _ = run_json(config, capsys)
    clashes = [d for d in doc["diagnostics"] if d["code"] == "SC605"]
    assert status == 1 and [d["severity"] for d in clashes] == ["error"] * 3  # thing_get, thing_list, thing_put
    servers = load_config(config).mcp.servers

    async def start() -> str:
        gateway = McpGateway({n: s.with_tmp(str(tmp_path)) for n, s in servers.items()}, connect_timeout=90)
        with pytest.raises(GatewayConfigError) as refused:
            await gateway.start()
        return str(refused.value)

    refused = asyncio.run(start())  # what `serve` says when it refuses to start
    assert [d["message"] for d in clashes] == [f"MCP servers cannot form one catalog: {part}"
                                              for part in refused.split("; ")]
    assert "tool 'thing_list' is served by both 'left' and 'right'" in refused
    assert {(d["file"], d["line"]) for d in clashes} == {(str(config), config.read_text().splitlines().index(
        "[mcp.servers.right]") + 1)}


def test_contract_arguments_the_tool_schema_does_not_have(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    contract = {"tools": {
        "thing_put": {"sideEffect": "WRITE", "args": {"thing_id": {"const": 7}},
                      "success": {"path": "code", "op": "EQ", "value": 200}},
        "thing_get": {"args": {"id": {"required": False}}, "success": {"path": "code", "op": "EQ", "value": 200}},
        "thing_list": {}}}
    config = _things_studio(tmp_path, contract, _annotated("things"))
    status, doc, _ = run_json(config, capsys)
    found = {d["code"]: d for d in doc["diagnostics"] if d["code"] in ("SC606", "SC607")}
    absent = found["SC606"]
    assert absent["severity"] == "warning" and absent["file"].endswith("contract.jsonc")
    assert absent["message"] == ("argument 'thing_id' of tool 'thing_put' is not in the tool's inputSchema (server "
                                 "things takes: id): its rule guards nothing, and the required 'id' is left to the "
                                 "model, told that the runtime fills it")
    assert absent["help"] == "did you mean 'id'?"
    text = (tmp_path / "studio" / "skills" / "thing.keep" / "contract.jsonc").read_text().splitlines()
    assert '"thing_id"' in text[absent["line"] - 1]
    never = found["SC607"]
    assert never["severity"] == "warning" and '"id"' in text[never["line"] - 1]
    assert never["message"] == ("tool 'thing_get' requires 'id' (the inputSchema of server things), but the contract "
                                "refuses every value of it and binds none: no call of thing_get can pass")
    assert status == 0
    assert run_json(config, capsys, "--strict")[0] == 1


def test_an_unreachable_server_says_which_url_and_what_failed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import http.server
    import threading

    class NotHere(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotHere)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/wrong-path"
    try:
        config = project(tmp_path, f'[mcp.servers.web]\nurl = "{url}"\n')
        status = skillc(["check", "--servers", "--config", str(config)])
    finally:
        httpd.shutdown()
    out = capsys.readouterr().out
    assert status == 0
    line = next(line for line in out.splitlines() if "SC604" in line)
    assert line.startswith(f"{config}:{config.read_text().splitlines().index('[mcp.servers.web]') + 1}:1: warning[SC604]")
    assert f"MCP server web ({url}) could not be listed: " in line and "Not Found" in line
    assert "ExceptionGroup" not in out and "TaskGroup" not in out and "<contract>" not in out
    assert f"server web: not listed ({url}): " in out
