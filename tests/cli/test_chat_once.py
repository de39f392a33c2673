"""Logging done right: the library only logs (NullHandler), the CLI shows each record once at the
level -v/-q/--log-level choose; in chat every warning, error and approval shows once, a failed
settlement never with a check mark, and Ctrl-C at the prompt ends the session at once with the
resume hint."""
from __future__ import annotations

import json
import logging
import signal
import sys
from pathlib import Path

import pytest
from helpers.terminal import Terminal

from skillc.main import run as skillc
from skillc.model_stub import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]


def test_the_library_has_a_null_handler_and_no_last_resort_output(capsys: pytest.CaptureFixture[str]) -> None:
    import skillc  # noqa: F401

    logger = logging.getLogger("skillc")
    assert any(isinstance(h, logging.NullHandler) for h in logger.handlers)
    saved = logger.handlers[:]
    try:
        logger.handlers = [h for h in saved if isinstance(h, logging.NullHandler)]
        logging.getLogger("skillc.runtime.mcp.gateway").warning("embedded: not printed by skillc")
    finally:
        logger.handlers = saved
    assert "embedded" not in capsys.readouterr().err


@pytest.mark.parametrize("argv,shown", [([], True), (["-q"], False), (["--log-level", "error"], False),
                                        (["-v"], True)])
def test_a_config_warning_shows_once_at_the_chosen_level(tmp_path: Path, argv: list[str], shown: bool,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "skillc.toml"
    config.write_text(f'[studio]\nsource = {json.dumps(str(ROOT / "examples" / "studio"))}\nbogus = 1\n')
    assert skillc([*argv, "check", "--config", str(config)]) == 0
    err = capsys.readouterr().err
    assert err.count("unknown key 'bogus'") == (1 if shown else 0), err
    if shown:
        assert "skillc: warning: " in err


def test_a_failed_settlement_is_never_a_check_mark() -> None:
    from skillc.render import Renderer

    lines: list[str] = []
    r = Renderer(lines.append)
    r.event({"type": "write.settled", "evidence": "e1", "tool": "t", "status": "FAILED", "via": "verify"})
    r.event({"type": "write.settled", "evidence": "e2", "tool": "t", "status": "SUCCESS", "via": "call"})
    assert lines[0].lstrip().startswith("✗") and "✓" not in lines[0]
    assert lines[1].lstrip().startswith("✓")


def test_chat_shows_each_warning_error_and_approval_once_and_ctrl_c_ends_it(tmp_path: Path) -> None:
    responses = [
        {"answer": {"agent": "editor"}},
        {"tool_calls": [{"name": "cms_space_list", "arguments": "{}"}]},
        {"tool_calls": [{"name": "cms_article_create", "arguments": json.dumps({"title": "Spring launch", "spaceId": 99})}]},
        {"tool_calls": [{"name": "cms_article_create", "arguments": json.dumps({"title": "Spring launch", "spaceId": 3})}]},
        {"tool_calls": [{"name": "builtin_node_approval",
                         "arguments": json.dumps({"summary": "Create the article", "toolName": "cms_article_create"})}]},
        {"tool_calls": [{"name": "builtin_node_fail", "arguments": json.dumps({"reason": "changed my mind"})}]},
    ]
    with FakeOpenAIServer(responses) as srv:
        config = tmp_path / "skillc.toml"
        config.write_text(f"""
[studio]
source = {json.dumps(str(ROOT / "examples" / "studio"))}
bogus = 1
[store]
path = {json.dumps(str(tmp_path / "store.sqlite"))}
[model]
base_url = {json.dumps(srv.url)}
model = "fake"
[mcp]
connect_timeout = 60
[mcp.servers.cms]
command = {json.dumps(sys.executable)}
args = ["-m", "skillc.examples.cms_server"]
env = {{ CMS_DB = {json.dumps(str(tmp_path / "cms.sqlite"))} }}
""")
        term = Terminal([sys.executable, "-m", "skillc", "chat", "--config", str(config),
                         "--platform", "userId=7", "--platform", "organId=9"], tmp_path)
        try:
            seen = term.expect("you> ")
            assert "MCP server cms: 16 tools" in seen, seen  # listed at start (else: why it is down)
            term.send("Please create an article titled Spring launch\n")
            seen += term.expect("confirm? [y]es / [n]o, reject / [c]ancel> ")
            term.send("y\n")
            seen += term.expect("you> ")
            term.proc.send_signal(signal.SIGINT)  # what Ctrl-C at the prompt delivers
            # the hint carries the options this chat was started with: run as printed, it resumes
            seen += term.expect(f"resume with: skillc chat --config {config} --platform userId=7 "
                                "--platform organId=9 --session ", timeout=15)
            seen += term.expect("interrupted", timeout=15)
        finally:
            status = term.close()
    assert status == 130
    assert seen.count("unknown key 'bogus'") == 1  # a config warning
    assert "inv_invoice_issue, inv_invoice_find served by no MCP server" in seen  # checked at chat start
    assert seen.count("PARAM_PROVENANCE_REJECTED") == 1  # a refused call
    assert seen.count("Title: Spring launch") == 1  # the approval question
    assert seen.count("changed my mind") == 1  # a failure reason (node, task and reply)
    assert "✓ write e2 (cms_article_create) settled SUCCESS via call" in seen


def test_scenario_run_names_a_server_that_did_not_start_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    scenario = yaml.safe_load((ROOT / "examples" / "scenarios" / "03-space-lookup-session-outputs.yaml").read_text())
    scenario["servers"] = {"down": {"command": str(tmp_path / "no-such-binary")}}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(scenario, allow_unicode=True))
    skillc(["scenario", "run", str(path)])
    captured = capsys.readouterr()
    assert (captured.out + captured.err).count("no-such-binary") == 1  # the report's line only
    skillc(["-v", "scenario", "run", str(path)])
    captured = capsys.readouterr()
    assert "skillc: warning: MCP server down unreachable" in captured.err  # -v shows the log too
