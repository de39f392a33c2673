"""`[server]` options: CORS for a browser front end calling directly; the dev-mode header."""
from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from skillc.runtime.outside.config import Config, load_config
from skillc.runtime.server import create_app
from skillc.runtime.server.options import read_options


def test_cors_origins_and_the_dev_header(tmp_path: Path) -> None:
    config = tmp_path / "skillc.toml"
    config.write_text('[server]\nauth = "dev"\ncors_origins = ["http://localhost:3000"]\n', encoding="utf-8")
    options = read_options(config, env={})
    app = create_app(tmp_path / "compiled", config=Config(), options=options)
    client = TestClient(app, base_url="http://localhost:8765")  # no lifespan; development mode serves loopback only
    pre = client.options("/agui", headers={"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST",
                                           "Access-Control-Request-Headers": "x-skillc-identity, content-type"})
    assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == "http://localhost:3000"
    other = client.get("/healthz", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in other.headers and other.headers["x-skillc-auth"] == "dev-insecure"
    assert read_options(None, env={"SKILLC_SERVE_DEV": "1", "SKILLC_GATEWAY_SECRET": "s"}).dev
    assert read_options(None, env={"SKILLC_GATEWAY_SECRET": "s"}).secret == "s"


def test_options_come_from_the_parsed_config(tmp_path: Path) -> None:
    path = tmp_path / "skillc.toml"
    path.write_text('[studio]\nurl = "http://studio.internal:8780"\n[server]\nport = 9001\n'
                    'trace_dir = "traces"\nclock_skew = "1m"\n', encoding="utf-8")
    config = load_config(path)
    options = read_options(None, env={"SKILLC_GATEWAY_SECRET": "s"}, config=config)  # no file read again
    assert (options.port, options.clock_skew, options.studio_url) == (9001, 60.0, "http://studio.internal:8780")
    assert options.trace_dir == str(tmp_path / "traces")
    assert read_options(path, env={}).port == 9001  # a path alone is loaded the same way
