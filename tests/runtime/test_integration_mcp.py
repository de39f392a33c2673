"""The runtime against real MCP server processes over stdio.

(a) The demo CMS server (examples/cms_server.py) with the example studio's `editor` agent: public
    scenario 01's script (lookup, create behind approval, CONFIRM) leaves a real row in the server's
    SQLite file; a repeat of the same create in the same task is replayed (no second call, no
    second row, §14.2); a new task's CONFIRMed create of the same title reaches the server again
    (idempotency is per task, docs/interpretations.md: Idempotency scope) and is refused there as
    a business failure (409).
(b) mcp-server-git from PyPI on a temporary repository: `git_add` / `git_commit` as contract
    writes (confirm:false + bypass list), `git_status` / `git_log` as reads and their verify; the
    runtime commits a file for real, checked with `git log`.

`mcp.invoked` events come from the gateway's `on_invoked`, as a deployed runtime records them.
"""
from __future__ import annotations

import importlib.util
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers.integration.events import expect_in_order, none_match, of_turn

HERE = Path(__file__).resolve().parents[1]
GIT_STUDIO = HERE / "helpers" / "integration" / "studios" / "git"
PLATFORM = {"userId": 7, "memberId": 70, "name": "alice", "organId": 9, "organName": "Acme",
            "organType": "COMPANY", "deptPath": "/1/9"}
TITLE = "Spring launch"

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


class Run:
    """A Runtime over real stdio servers, a scripted model and a SQLite store, with its trace."""

    def __init__(self, compiled: Any, servers: dict[str, Any], store: Path, settings: dict[str, Any]) -> None:
        from skillc.runtime.outside.config import Settings
        from skillc.runtime.mcp.gateway import McpGateway
        from skillc.runtime.model.scripted import ScriptedModel
        from skillc.runtime.store import Store
        from skillc.runtime.telemetry.trace import TraceWriter

        self.trace = TraceWriter(keep=True)
        self.model = ScriptedModel()
        self.store = Store(store)
        self.settings = Settings.from_mapping(settings)
        self.compiled = compiled
        self.session: Any = None
        # Generous connect timeout: a stdio server can take seconds to start on a loaded machine.
        self.gateway = McpGateway(servers, timeout=30, on_invoked=self._invoked, connect_timeout=60)

    def _invoked(self, tool: str, args: dict[str, Any]) -> None:
        s = self.session.env
        self.trace.emit({"type": "mcp.invoked", "tool": tool, "args": args}, session=s.id, turn=s.session.turn,
                        task=s.task.id if s.task else None)

    async def __aenter__(self) -> Run:
        from skillc.runtime.session import Runtime

        await self.gateway.start()
        assert not self.gateway.unreachable_servers, self.gateway.unreachable_servers
        runtime = Runtime(self.compiled, self.gateway, self.model, self.store, self.settings,
                          trace=self.trace, seed=7)
        self.session = await runtime.open_session(PLATFORM, session_id="s1")
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.gateway.aclose()
        self.store.close()

    async def turn(self, script: list[dict[str, Any]], *, user: str | None = None,
                   answer: dict[str, Any] | None = None) -> tuple[Any, list[dict[str, Any]]]:
        """Play one turn; returns the reply and that turn's events."""
        self.model.load_turn(script)
        reply = await (self.session.send(user) if user is not None else self.session.answer(answer or {}))
        return reply, of_turn(self.trace.events, self.session.env.session.turn)

    def invocations(self, tool: str) -> list[dict[str, Any]]:
        """The args of every mcp.invoked of `tool` so far."""
        return [e["args"] for e in self.trace.events if e["type"] == "mcp.invoked" and e["tool"] == tool]


# ---------------------------------------------------------------- (a) the demo CMS server


def _articles(db: Path, title: str) -> list[tuple[int, int, int, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT id, space_id, author_id, status FROM article WHERE title = ?", (title,)).fetchall()


async def test_cms_scenario_01_creates_a_real_row_and_replays_the_repeat(tmp_path: Path) -> None:
    import skillc.generated
    from skillc.runtime.compiled.loader import load_compiled

    db = tmp_path / "cms.sqlite"
    servers = {"cms": {"command": sys.executable, "args": ["-m", "skillc.examples.cms_server"], "env": {"CMS_DB": str(db)}}}
    compiled = load_compiled(Path(skillc.generated.__file__).parent)
    async with Run(compiled, servers, tmp_path / "store.sqlite", {}) as run:
        # Turn 1: the create is sent to the lookup first, then stops at the write gate.
        reply, events = await run.turn([
            {"route": "editor"},
            {"call": {"tool": "cms_article_create", "args": {"title": TITLE}}},
            {"call": {"tool": "cms_space_list", "args": {}}},
            {"call": {"tool": "cms_article_create", "args": {"title": TITLE, "spaceId": 3}}},
            {"call": {"tool": "builtin_node_approval", "args": {"summary": "Create the article",
                                                                "toolName": "cms_article_create"}}},
        ], user=f"Please create an article titled {TITLE}")
        assert reply.suspended and reply.kind == "APPROVAL"
        expect_in_order(events, [
            {"type": "agent.routed", "agent": "editor", "via": "model"},
            {"type": "task.planned", "via": "shortcut", "nodes": [{"node": "n1", "skill": "cms.article.lifecycle",
                                                                   "target": "cms_article_create", "deps": [], "kind": "main"}]},
            # The real server's schema leaves spaceId optional (the contract governs it), so the
            # contract's missing action applies: look the space up first (§5.5 CALL_TOOL).
            {"type": "tool.call", "tool": "cms_article_create", "ok": False, "error": "PARAM_PROVENANCE_CALL_TOOL",
             "message": {"$contains": "spaceId"}},
            {"type": "mcp.invoked", "tool": "cms_space_list", "args": {"organId": 9}},
            {"type": "tool.call", "tool": "cms_space_list", "ok": True, "evidence": "e1", "status": "SUCCESS",
             "business_ok": True, "empty": False},
            {"type": "tool.call", "tool": "cms_article_create", "ok": False, "error": "APPROVAL_REQUIRED",
             "code": "agent_runtime.42221"},
            {"type": "node.suspended", "node": "n1", "kind": "APPROVAL", "tool": "cms_article_create",
             "question": {"$contains": f"Title: {TITLE}"}},
        ])
        none_match(events, {"type": "mcp.invoked", "tool": "cms_article_create"})
        assert _articles(db, TITLE) == []

        # Turn 2: CONFIRM runs the write once; the same create again is a replay (§14.2).
        reply, events = await run.turn([
            {"call": {"tool": "cms_article_create", "args": {"title": TITLE, "spaceId": 3}}},
            {"call": {"tool": "builtin_node_finish", "args": {"output": "Created article 17"}}},
        ], answer={"decision": "CONFIRM"})
        assert not reply.suspended and reply.text == "Created article 17"
        expect_in_order(events, [
            {"type": "node.resumed", "node": "n1", "kind": "APPROVAL"},
            {"type": "mcp.invoked", "tool": "cms_article_create", "args": {"title": TITLE, "spaceId": 3, "authorId": 7}},
            {"type": "tool.call", "tool": "cms_article_create", "ok": True, "evidence": "e2", "status": "SUCCESS",
             "business_ok": True, "replayed": False},
            {"type": "write.settled", "evidence": "e2", "tool": "cms_article_create", "status": "SUCCESS", "via": "call"},
            {"type": "tool.call", "tool": "cms_article_create", "ok": True, "evidence": "e2", "replayed": True},
            {"type": "node.finished", "node": "n1", "state": "DONE"},
            {"type": "task.finished", "task": "t1", "state": "DONE"},
        ])
        assert len(run.invocations("cms_article_create")) == 1
        assert _articles(db, TITLE) == [(17, 3, 7, "DRAFT")]

        # Turns 3-4: a new task asks for the same article. Idempotency is per task, so this
        # CONFIRMed create reaches the server, which refuses the duplicate (409): still one row.
        reply, events = await run.turn([
            {"route": "editor"},
            {"call": {"tool": "cms_space_list", "args": {}}},
            {"call": {"tool": "cms_article_create", "args": {"title": TITLE, "spaceId": 3}}},
            {"call": {"tool": "builtin_node_approval", "args": {"summary": "Create it again",
                                                                "toolName": "cms_article_create"}}},
        ], user=f"Create an article titled {TITLE} once more")
        assert reply.suspended and reply.kind == "APPROVAL"
        expect_in_order(events, [{"type": "task.planned", "task": "t2"},
                                 {"type": "tool.call", "tool": "cms_article_create", "error": "APPROVAL_REQUIRED"}])
        reply, events = await run.turn([
            {"call": {"tool": "builtin_node_fail", "args": {"reason": "the article already exists"}}},
        ], answer={"decision": "CONFIRM"})
        expect_in_order(events, [
            {"type": "mcp.invoked", "tool": "cms_article_create", "args": {"title": TITLE, "spaceId": 3, "authorId": 7}},
            {"type": "tool.call", "tool": "cms_article_create", "ok": False, "error": "TOOL_BUSINESS_FAILED",
             "code": 409, "status": "SUCCESS", "business_ok": False, "evidence": "e4"},
            {"type": "write.settled", "evidence": "e4", "status": "SUCCESS", "via": "call"},
            {"type": "task.finished", "task": "t2", "state": "FAILED"},
        ])
        assert len(run.invocations("cms_article_create")) == 2
        assert len(run.invocations("cms_space_list")) == 2
    assert _articles(db, TITLE) == [(17, 3, 7, "DRAFT")]


# ---------------------------------------------------------------- (b) mcp-server-git from PyPI

HAS_GIT_SERVER = importlib.util.find_spec("mcp_server_git") is not None


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(not HAS_GIT_SERVER, reason="mcp-server-git is not installed (pip install mcp-server-git)")
async def test_git_server_commits_a_file_for_real(tmp_path: Path) -> None:
    from skillc.compiler.build import compile_studio
    from skillc.runtime.compiled.loader import load_compiled

    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.name", "skillc test")
    _git(repo, "config", "user.email", "test@skillc.invalid")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    (repo / "notes.txt").write_text("release notes\n", encoding="utf-8")

    result = compile_studio(GIT_STUDIO, tmp_path / "compiled")
    assert not result.rejected, result.rejected
    servers = {"git": {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", str(repo)]}}
    settings = {"state.write-confirm-bypass-tools": ["git_add", "git_commit"]}
    message = "Add release notes"
    where = {"repo_path": str(repo)}
    async with Run(load_compiled(tmp_path / "compiled"), servers, tmp_path / "store.sqlite", settings) as run:
        reply, events = await run.turn([
            {"call": {"tool": "git_status", "args": where}},
            {"call": {"tool": "git_add", "args": {**where, "files": ["notes.txt"]}}},
            {"call": {"tool": "git_commit", "args": {**where, "message": message}}},
            {"call": {"tool": "git_log", "args": {**where, "max_count": 1}}},
            {"call": {"tool": "git_commit", "args": {**where, "message": message}}},
            {"call": {"tool": "builtin_node_finish", "args": {"output": "notes.txt is committed"}}},
        ], user=f"In the repository {repo} commit notes.txt with the message {message}")
    assert not reply.suspended and reply.text == "notes.txt is committed"
    expect_in_order(events, [
        {"type": "task.planned", "via": "shortcut"},
        {"type": "tool.call", "tool": "git_status", "ok": True, "evidence": "e1"},
        {"type": "mcp.invoked", "tool": "git_add", "args": {**where, "files": ["notes.txt"]}},
        {"type": "tool.call", "tool": "git_add", "ok": True, "evidence": "e2", "status": "SUCCESS", "business_ok": True},
        {"type": "write.settled", "evidence": "e2", "tool": "git_add", "status": "SUCCESS", "via": "call"},
        {"type": "mcp.invoked", "tool": "git_commit", "args": {**where, "message": message}},
        {"type": "tool.call", "tool": "git_commit", "ok": True, "evidence": "e3", "status": "SUCCESS"},
        {"type": "write.settled", "evidence": "e3", "tool": "git_commit", "status": "SUCCESS", "via": "call"},
        {"type": "tool.call", "tool": "git_log", "ok": True, "evidence": "e4"},
        {"type": "tool.call", "tool": "git_commit", "ok": True, "evidence": "e3", "replayed": True},
        {"type": "node.finished", "state": "DONE"},
        {"type": "task.finished", "state": "DONE"},
    ])
    none_match(events, {"type": "tool.call", "error": "APPROVAL_REQUIRED"})
    # Plain-text results became {"text": ...} (docs/interpretations.md: Response JSON) and were judged by `success`.
    evidence = run.session.env.evidence
    assert "notes.txt" in evidence["e1"].response["text"]  # untracked before the add
    assert evidence["e3"].response["text"] == f"Changes committed successfully with hash {_git(repo, 'rev-parse', 'HEAD')}"
    assert len(run.invocations("git_commit")) == 1 and len(run.invocations("git_add")) == 1
    # The commit is real: git itself shows it, with the file, exactly once.
    assert _git(repo, "log", "--format=%s") == f"{message}\ninit"
    assert _git(repo, "show", "--name-only", "--format=", "HEAD") == "notes.txt"
    assert _git(repo, "status", "--porcelain") == ""
