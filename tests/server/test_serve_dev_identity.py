"""Development mode plays the example data as it is (its default caller is the example's user 7
of organisation 9) and the caller can be set from the command line (`--dev-identity JSON`)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from helpers.serve_workers import free_port
from helpers.wait import wait_for
from skillc.main import run
from skillc.runtime.server.auth import DEV_IDENTITY, GatewayAuth

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_dev_identity_is_the_example_datas_caller() -> None:
    assert DEV_IDENTITY["organId"] == 9 and DEV_IDENTITY["userId"] == 7  # examples/cms_server.py's organisation
    auth = GatewayAuth(secret=None, dev=True)
    assert auth.identify("GET", "/api/me", {}, b"").platform == DEV_IDENTITY


def test_serve_dev_identity_is_who_an_unsigned_request_is(compiled: Path, tmp_path: Path) -> None:
    config = tmp_path / "skillc.toml"
    config.write_text(f"[store]\npath = {json.dumps(str(tmp_path / 's.sqlite'))}\n"
                      "[model]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"unused\"\n", encoding="utf-8")
    port = free_port()
    who = {"userId": 8, "organId": 9, "name": "bob"}
    proc = subprocess.Popen([sys.executable, "-m", "skillc", "serve", str(compiled), "--config", str(config),
                             "--dev-insecure", "--dev-identity", json.dumps(who), "--port", str(port)],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        def up() -> bool:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            try:
                return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(up, "skillc serve to answer")
        me = httpx.get(f"http://127.0.0.1:{port}/api/me", timeout=10).json()
        assert me["platform"] == who and me["dev_mode"] is True
        header = {"X-Skillc-Identity": json.dumps({"userId": 7, "organId": 9})}  # a header still wins
        assert httpx.get(f"http://127.0.0.1:{port}/api/me", headers=header, timeout=10).json()["platform"]["userId"] == 7
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("argv,message", [
    (["--dev-insecure", "--dev-identity", '{"organId": 9}'], "--dev-identity: the identity has no userId"),
    (["--dev-insecure", "--dev-identity", "alice"], "--dev-identity must be a JSON object"),
    (["--dev-identity", '{"userId": 7}'], "--dev-identity is for development mode only"),
])
def test_a_bad_dev_identity_is_one_line(compiled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch, argv: list[str], message: str) -> None:
    monkeypatch.delenv("SKILLC_SERVE_DEV", raising=False)
    config = tmp_path / "skillc.toml"
    config.write_text(f"[store]\npath = {json.dumps(str(tmp_path / 's.sqlite'))}\n", encoding="utf-8")
    assert run(["serve", str(compiled), "--config", str(config), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("skillc serve: error: ") and message in err[0], err
