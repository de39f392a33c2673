"""`skillc serve` driven by the official AG-UI TypeScript client, `@ag-ui/client` 1.0 (its event
verifier and zod schemas run on every event), from Node: an approval round trip, a resume whose
digest does not fit, and a run whose model endpoint fails. The client is installed from the npm
registry into a cache folder outside the checkout the first time (`$SKILLC_NODE_CACHE`, default
`~/.cache/skillc-tests/node`); without Node or npm the test is skipped and says why."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.server import create_app

from serve_harness import ServerThread, write_config

CLIENT = "@ag-ui/client@1.0.0"
DRIVER = Path(__file__).parents[1] / "helpers" / "node" / "agui_client.mjs"
ROUTE = {"answer": {"agent": "editor"}}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": args}]}


def _client_dir() -> Path:
    """The folder whose node_modules holds the client: installed once, then reused."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js and npm are needed to run the official AG-UI client (@ag-ui/client)")
    root = Path(os.environ.get("SKILLC_NODE_CACHE") or Path.home() / ".cache" / "skillc-tests" / "node")
    target = root / CLIENT.replace("/", "+").replace("@", "")
    if (target / "node_modules" / "@ag-ui" / "client" / "package.json").is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="install-", dir=root))
    done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save", "--prefix", str(staging), CLIENT],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.skip(f"npm could not install {CLIENT}: {done.stderr.strip().splitlines()[-1:]}")
    try:
        staging.rename(target)  # whole or not at all: a concurrent install may have won
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def drive(url: str, thread: str, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Play `steps` with one HttpAgent; one result per step."""
    env = {**os.environ, "AGUI_CLIENT_DIR": str(_client_dir())}
    plan = {"url": url + "/agui", "threadId": thread, "steps": steps}
    done = subprocess.run(["node", str(DRIVER)], input=json.dumps(plan), capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def dev_served(compiled: Path, fake_model: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """`skillc serve --dev-insecure` of the example studio (the client sends no gateway signature)."""
    _client_dir()  # skip before starting anything when the client cannot be had
    tmp = tmp_path_factory.mktemp("agui-client")
    app = create_app(config_path=write_config(tmp, str(compiled), fake_model.url), dev=True)
    with ServerThread(app) as server:
        yield server


def _types(result: dict[str, Any]) -> list[str]:
    return [e["type"] for e in result["events"]]


def test_the_official_client_plays_approval_bad_resume_and_failed_run(dev_served: Any, model: Any,
                                                                      fake_model: Any) -> None:
    model.add(ROUTE, call("cms_space_list"), call("cms_article_create", title="Node launch", spaceId=3),
              call("builtin_node_approval", summary="Create Node launch", toolName="cms_article_create"),
              call("builtin_node_finish", output="Created article 17"),
              {"status": 500, "body": {"error": {"message": "upstream exploded at shard-9"}}})
    asked, refused, approved, failed = drive(dev_served.url, "node-client", [
        {"send": "Please create an article titled Node launch"},
        {"approve": "hmac-sha256:00"},  # a digest that is not the pending approval's
        {"approve": "digest"},
        {"send": "And another one titled Doomed"},
    ])
    for result in (asked, refused, approved, failed):  # the client's verifier and schemas accepted every event
        assert result["said"] == [], result["said"]
        assert result["events"][0]["type"] == "RUN_STARTED" and result["events"][0]["protocolVersion"] == "1.0"

    assert asked["error"] is None and _types(asked)[-1] == "RUN_FINISHED"
    assert asked["events"][-1]["outcome"]["type"] == "interrupt"
    [pending] = asked["pending"]
    assert pending["reason"] == "skillc.approval" and pending["metadata"]["digest"].startswith("hmac-sha256:")

    # the refusal is the run's own RUN_ERROR, not a transport failure; the question stays pending
    assert _types(refused) == ["RUN_STARTED", "RUN_ERROR"]
    assert refused["events"][-1]["code"] == "APPROVAL_DIGEST_MISMATCH"
    assert refused["error"] is None or "HTTP" not in refused["error"]
    assert [p["id"] for p in refused["pending"]] == [pending["id"]]

    assert approved["error"] is None and approved["events"][-1]["outcome"] == {"type": "success"}
    assert approved["pending"] == []
    text = "".join(e["delta"] for e in approved["events"] if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == "Created article 17"

    assert _types(failed)[0] == "RUN_STARTED" and _types(failed)[-1] == "RUN_ERROR"
    assert "RUN_FINISHED" not in _types(failed)
    end = failed["events"][-1]
    assert end["code"] == "MODEL_ERROR" and end["metadata"]["reference"] in end["message"]
    shown = json.dumps(failed["events"])
    assert "shard-9" not in shown and fake_model.url.split("//")[1].split("/")[0] not in shown
