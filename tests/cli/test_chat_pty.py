"""`skillc chat` driven through a pseudo-terminal, against the loopback fake model server and the
real example CMS MCP server: a write stopped for approval is confirmed at the prompt."""
from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

from helpers.terminal import Terminal

from skillc.model_stub import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]


def test_chat_confirms_an_approval_at_the_prompt(tmp_path: Path) -> None:
    responses = [
        {"answer": {"agent": "editor"}},
        {"tool_calls": [{"name": "cms_space_list", "arguments": "{}"}]},
        {"tool_calls": [{"name": "cms_article_create", "arguments": json.dumps({"title": "Spring launch", "spaceId": 3})}]},
        {"tool_calls": [{"name": "builtin_node_approval",
                         "arguments": json.dumps({"summary": "Create the article", "toolName": "cms_article_create"})}]},
        {"tool_calls": [{"name": "builtin_node_finish", "arguments": json.dumps({"output": "Created article 17"})}]},
    ]
    db = tmp_path / "cms.sqlite"
    with FakeOpenAIServer(responses) as srv:
        config = tmp_path / "skillc.toml"
        config.write_text(f"""
[studio]
source = {json.dumps(str(ROOT / "examples" / "studio"))}
[store]
path = {json.dumps(str(tmp_path / "store.sqlite"))}
[model]
base_url = {json.dumps(srv.url)}
model = "fake"
[mcp]
connect_timeout = 90  # a loaded machine starts the server slowly
[mcp.servers.cms]
command = {json.dumps(sys.executable)}
args = ["-m", "skillc.examples.cms_server"]
env = {{ CMS_DB = {json.dumps(str(db))} }}
""")
        term = Terminal([sys.executable, "-m", "skillc", "chat", "--config", str(config),
                         "--platform", "userId=7", "--platform", "organId=9"], tmp_path)
        try:
            term.expect("you> ")
            term.send("Please create an article titled Spring launch\n")
            shown = term.expect("confirm? [y]es / [n]o, reject / [c]ancel> ")
            assert "Looking up spaces" in shown  # the tool label as progress
            assert "Title: Spring launch" in shown  # the approval's parameter summary
            term.send("y\n")
            done = term.expect("you> ")
            assert "settled SUCCESS via call" in done and "Created article 17" in done
            term.send("/quit\n")
            term.expect("bye")
        finally:
            status = term.close()
        assert status == 0
    rows = sqlite3.connect(db).execute("SELECT id, title FROM article WHERE title = 'Spring launch'").fetchall()
    assert rows == [(17, "Spring launch")]
    purposes = [r.headers.get("x-skillc-purpose") for r in srv.requests]
    assert purposes == ["route", "step", "step", "step", "step"]
