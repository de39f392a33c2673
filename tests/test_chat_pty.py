"""`skillc chat` driven through a pseudo-terminal, against the loopback fake model server and the
real example CMS MCP server: a write stopped for approval is confirmed at the prompt."""
from __future__ import annotations

import json
import os
import pty
import select
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from skillc.runtime.model.fake_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]


class Terminal:
    """A child process on a pty, read until a marker with a deadline (no sleeps)."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, close_fds=True)
        os.close(slave)
        self.seen = ""

    def expect(self, marker: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while marker not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"no {marker!r} on the terminal; saw:\n{self.seen}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096).decode(errors="replace")
                except OSError:
                    chunk = ""
                assert chunk or self.proc.poll() is None, f"process ended before {marker!r}:\n{self.seen}"
                self.seen += chunk
        head, _, self.seen = self.seen.partition(marker)
        return head + marker

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())


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
[mcp.servers.cms]
command = {json.dumps(sys.executable)}
args = ["-m", "skillc.examples.cms_server"]
env = {{ CMS_DB = {json.dumps(str(db))} }}
""")
        term = Terminal([sys.executable, "-m", "skillc", "chat", "--config", str(config),
                         "--platform", "userId=7", "--platform", "organId=9"], tmp_path)
        try:
            term.expect("you> ")
            term.send("Please create an article titled Spring launch")
            shown = term.expect("confirm? [y]es / [n]o, reject / [c]ancel> ")
            assert "Looking up spaces" in shown  # the tool label as progress
            assert "Title: Spring launch" in shown  # the approval's parameter summary
            term.send("y")
            done = term.expect("you> ")
            assert "settled SUCCESS via call" in done and "Created article 17" in done
            term.send("/quit")
            term.expect("bye")
            assert term.proc.wait(timeout=30) == 0
        finally:
            if term.proc.poll() is None:
                term.proc.kill()
            os.close(term.master)
    rows = sqlite3.connect(db).execute("SELECT id, title FROM article WHERE title = 'Spring launch'").fetchall()
    assert rows == [(17, "Spring launch")]
    purposes = [r.headers.get("x-skillc-purpose") for r in srv.requests]
    assert purposes == ["route", "step", "step", "step", "step"]
