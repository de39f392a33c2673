"""`skillc chat` across two processes on a pseudo-terminal: the first stops on an approval and ends
with Ctrl-D (EOF); the second resumes the session with the command the first printed, is shown what is waiting, refuses an
answer that is not y/n/c, and confirms. Against the loopback fake model server and the real
example CMS MCP server; the write reaches the CMS exactly once."""
from __future__ import annotations

import json
import re
import shlex
import sqlite3
import sys
from pathlib import Path

from helpers.terminal import Terminal

from skillc.model_stub import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
APPROVAL_PROMPT = "confirm? [y]es / [n]o, reject / [c]ancel> "


def test_a_session_waiting_on_approval_is_resumed_and_confirmed_in_a_new_process(tmp_path: Path) -> None:
    responses = [
        {"answer": {"agent": "editor"}},
        {"tool_calls": [{"name": "cms_space_list", "arguments": "{}"}]},
        {"tool_calls": [{"name": "cms_article_create", "arguments": json.dumps({"title": "Spring launch", "spaceId": 3})}]},
        {"tool_calls": [{"name": "builtin_node_approval",
                         "arguments": json.dumps({"summary": "Create the article", "toolName": "cms_article_create"})}]},
        # the second process, after the confirmation:
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
        chat = [sys.executable, "-m", "skillc", "chat", "--config", str(config), "--platform", "userId=7",
                "--platform", "organId=9"]

        first = Terminal(chat, tmp_path)
        try:
            intro = first.expect("you> ")
            session = re.search(r"session (\S+) \(resume with: (skillc chat .*--session \1)\)", intro)
            assert session, intro
            sid, hint = session.group(1), session.group(2)
            first.send("/session\n")
            assert sid in first.expect("you> ")
            first.send("Please create an article titled Spring launch\n")
            shown = first.expect(APPROVAL_PROMPT)
            assert "APPROVAL" in shown and "Title: Spring launch" in shown
            first.send("\x04")  # Ctrl-D at the approval prompt: the session stays suspended
            first.expect(f"bye (session {sid})")
        finally:
            assert first.close() == 0

        # the greeting's hint, run as printed (a bare `--session ID` lost the --config: "no model name")
        second = Terminal([sys.executable, "-m", *shlex.split(hint)], tmp_path)
        try:
            resumed = second.expect(APPROVAL_PROMPT)
            assert f"resumed {sid}" in resumed
            assert "waiting: APPROVAL: Create the article" in resumed
            second.send("/pending\n")
            assert '"kind": "APPROVAL"' in second.expect(APPROVAL_PROMPT)
            second.send("maybe\n")
            assert "please answer y, n or c" in second.expect(APPROVAL_PROMPT)
            second.send("y\n")
            done = second.expect("you> ")
            assert "settled SUCCESS via call" in done and "Created article 17" in done
            second.send("/quit\n")
            second.expect(f"bye (session {sid})")
        finally:
            assert second.close() == 0

    rows = sqlite3.connect(db).execute("SELECT id, title FROM article WHERE title = 'Spring launch'").fetchall()
    assert rows == [(17, "Spring launch")]  # written once, after the confirmation in the second process
    purposes = [r.headers.get("x-skillc-purpose") for r in srv.requests]
    assert purposes == ["route", "step", "step", "step", "step"]
