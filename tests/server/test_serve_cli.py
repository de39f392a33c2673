"""The two commands refuse what they cannot serve, with one line and exit status 2."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
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


ANNOTATED = Path(__file__).parents[1] / "helpers" / "mcp_servers" / "annotated_server.py"


def _serve(compiled: Path, config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """`skillc serve` as a user starts it, with a bounded wait for it to give up."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLC_", "OTEL_"))}
    return subprocess.run([sys.executable, "-m", "skillc", "serve", str(compiled), "--config", str(config),
                           "--dev-insecure", *extra], capture_output=True, text=True, timeout=180, env=env)


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("skillc serve: error: ")]


def test_serve_says_each_server_clash_in_one_line_and_exits_2(compiled: Path, tmp_path: Path) -> None:
    """Two MCP servers offering the same tools: what `check --servers` reports as SC605, line by line."""
    server = f"command = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(ANNOTATED))}]\n"
    config = tmp_path / "skillc.toml"
    config.write_text(f"[store]\npath = {str(tmp_path / 's.sqlite')!r}\n[model]\nbase_url = \"http://127.0.0.1:9/v1\"\n"
                      f"model = \"m\"\n[mcp]\nconnect_timeout = 90\n"
                      f"[mcp.servers.left]\n{server}[mcp.servers.right]\n{server}", encoding="utf-8")
    done = _serve(compiled, config, "--port", "0")
    assert done.returncode == 2, done.stderr
    assert _errors(done.stderr) == [
        f"skillc serve: error: MCP servers cannot form one catalog: tool {tool!r} is served by both 'left' and 'right'"
        for tool in ("thing_get", "thing_put", "thing_list")]
    assert "Traceback" not in done.stderr and "ExceptionGroup" not in done.stderr
    assert "Application startup failed" not in done.stderr
    assert "http://127.0.0.1:0/" not in done.stderr  # the address said is the one bound (port 0: a free one)


def test_serve_says_a_bad_model_config_and_a_taken_port_in_one_line(compiled: Path, tmp_path: Path) -> None:
    config = tmp_path / "skillc.toml"
    config.write_text(f"[store]\npath = {str(tmp_path / 's.sqlite')!r}\n[model]\nmodel = \"m\"\n"
                      "api_key_env = \"SKILLC_TEST_UNSET_KEY\"\n", encoding="utf-8")
    done = _serve(compiled, config, "--port", "0")
    assert done.returncode == 2, done.stderr
    assert _errors(done.stderr) == ["skillc serve: error: model config: api_key_env names 'SKILLC_TEST_UNSET_KEY', "
                                    "which is not set"]
    assert "Traceback" not in done.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _serve(compiled, config, "--port", str(port), "--base-url", "http://127.0.0.1:9/v1")
    assert done.returncode == 2, done.stderr
    [line] = _errors(done.stderr)
    assert line.startswith(f"skillc serve: error: cannot listen on 127.0.0.1:{port}: ") and "in use" in line
    assert "Traceback" not in done.stderr
