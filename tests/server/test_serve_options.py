"""`[server]` options: CORS for a browser front end calling directly; the dev-mode header."""
from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from skillc.runtime.config import Config
from skillc.runtime.server import create_app
from skillc.runtime.server.options import read_options


def test_cors_origins_and_the_dev_header(tmp_path: Path) -> None:
    config = tmp_path / "skillc.toml"
    config.write_text('[server]\nauth = "dev"\ncors_origins = ["http://localhost:3000"]\n', encoding="utf-8")
    options = read_options(config, env={})
    app = create_app(tmp_path / "compiled", config=Config(), options=options)
    client = TestClient(app)  # no lifespan: only what needs no runtime is asked
    pre = client.options("/agui", headers={"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST",
                                           "Access-Control-Request-Headers": "x-skillc-identity, content-type"})
    assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == "http://localhost:3000"
    other = client.get("/healthz", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in other.headers and other.headers["x-skillc-auth"] == "dev-insecure"
    assert read_options(None, env={"SKILLC_SERVE_DEV": "1", "SKILLC_GATEWAY_SECRET": "s"}).dev
    assert read_options(None, env={"SKILLC_GATEWAY_SECRET": "s"}).secret == "s"
