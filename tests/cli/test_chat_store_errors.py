"""`skillc chat` when the store refuses a turn: another process holds the session (SESSION_BUSY),
the store cannot commit (STORE_UNAVAILABLE), or the session's stored row is unreadable. Each shows
one clear line; busy and unavailable keep the chat usable, a corrupt session ends it with how to
go on. The chat runs in-process on the compiled example studio and a real SQLite file; the store
is changed from "another process" (a second connection) between two prompts."""
from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sqlite3
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from skillc.chat import ChatError, chat
from skillc.runtime.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]


def _args(tmp_path: Path, session: str | None = None) -> SimpleNamespace:
    config = tmp_path / "skillc.toml"
    # No MCP server and a model endpoint nobody listens on: a turn ends at once with a model error
    # reply, which is enough to reach the turn's commit.
    config.write_text(f"""
[store]
path = {json.dumps(str(tmp_path / "store.sqlite"))}
[model]
base_url = "http://127.0.0.1:9/v1"
model = "none"
max_retries = 0
timeout = 5
""")
    return SimpleNamespace(config=str(config), compiled=str(ROOT / "generated"), session=session, store=None,
                           platform=["userId=7"], base_url=None, model=None, trace=None, color=False)


def _run(args: SimpleNamespace, script: list[Callable[[str], str]]) -> tuple[int, list[str]]:
    """Run chat with `script`: one function per prompt, given the session id, returning the line."""
    out: list[str] = []
    steps = iter(script)

    def read(prompt: str) -> str:
        sid = next(re.search(r"(?:session|resumed) (\S+) \(resume with", line).group(1)  # type: ignore[union-attr]
                   for line in out if "(resume with" in line)
        try:
            return next(steps)(sid)
        except StopIteration:
            raise EOFError from None

    status = asyncio.run(chat(args, read, out.append))
    return status, out


def _db(tmp_path: Path) -> sqlite3.Connection:
    return sqlite3.connect(tmp_path / "store.sqlite", isolation_level=None)


def _other_holder() -> str:
    # a live holder that is not this chat: this process's pid (alive), a holder id of its own
    return f"{socket.gethostname()}:{os.getpid()}:other-process"


def test_a_session_busy_elsewhere_is_one_line_and_the_chat_goes_on(tmp_path: Path) -> None:
    other: dict[str, Any] = {}

    def hold(sid: str) -> str:
        other["store"] = SQLiteStore(tmp_path / "store.sqlite")
        assert other["store"].acquire_lease(sid, _other_holder(), now=0.0, ttl=1e12).granted
        return "Please create an article"

    def release(sid: str) -> str:
        other["store"].release_lease(sid, _other_holder())
        other["store"].close()
        return "/pending"

    status, out = _run(_args(tmp_path), [hold, release, lambda sid: "/session", lambda sid: "/quit"])
    assert status == 0, out
    busy = [line for line in out if "SESSION_BUSY" in line]
    assert len(busy) == 1 and "another process" in busy[0] and "again" in busy[0], out
    after = out[out.index(busy[0]) + 1:]
    assert after[0] == "nothing is waiting" and after[-1].startswith("bye (session "), out
    # nothing of the refused message was stored
    assert _db(tmp_path).execute("SELECT COUNT(*) FROM messages").fetchone() == (0,)


def test_a_store_that_cannot_commit_is_one_line_and_the_next_turn_works(tmp_path: Path) -> None:
    def break_store(sid: str) -> str:
        # what a full disk does to the turn's commit: the reply's insert fails
        _db(tmp_path).execute("CREATE TRIGGER full BEFORE INSERT ON replies BEGIN "
                              "SELECT RAISE(ABORT, 'database or disk is full'); END")
        return "Please create an article"

    def mend(sid: str) -> str:
        _db(tmp_path).execute("DROP TRIGGER full")
        return "Please create an article"

    status, out = _run(_args(tmp_path), [break_store, mend, lambda sid: "/quit"])
    assert status == 0, out
    failed = [line for line in out if "STORE_UNAVAILABLE" in line]
    assert len(failed) == 1 and "disk is full" in failed[0] and "send your message again" in failed[0], out
    db = _db(tmp_path)
    # the failed turn left nothing; the retried one is stored (its message and its reply)
    assert db.execute("SELECT COUNT(*) FROM messages").fetchone() == (1,)
    assert db.execute("SELECT COUNT(*) FROM replies").fetchone() == (1,)
    assert out[-1].startswith("bye (session "), out


def test_a_corrupt_session_ends_the_chat_with_how_to_go_on(tmp_path: Path) -> None:
    def corrupt(sid: str) -> str:
        # another process rewrote the row (version moved on), and what it left is not JSON
        _db(tmp_path).execute("UPDATE sessions SET doc = 'not json', version = version + 1 WHERE id = ?", (sid,))
        return "hello"

    status, out = _run(_args(tmp_path), [corrupt, lambda sid: "/quit"])
    assert status == 1, out
    sid = next(re.search(r"session (\S+) \(resume", line).group(1) for line in out if "(resume" in line)  # type: ignore[union-attr]
    assert "unreadable" in out[-1] and f"skillc chat --session {sid}" in out[-1], out
    assert not any(line.startswith("bye") for line in out)
    with pytest.raises(ChatError, match="unreadable.*start without --session"):  # resuming it says so too
        _run(_args(tmp_path, session=sid), [])


def test_a_resumed_chat_appends_to_its_trace_and_the_chain_holds(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`--trace` is appended to: a session resumed in a new chat with the same file continues its
    audit chain there, and the file verifies as one chain."""
    from skillc.runtime.telemetry.audit import verify
    from skillc.runtime.telemetry.trace import iter_events

    monkeypatch.delenv("SKILLC_AUDIT_KEY", raising=False)
    trace = tmp_path / "trace.jsonl"
    args = _args(tmp_path)
    args.trace = str(trace)
    status, out = _run(args, [lambda sid: "hello", lambda sid: "/quit"])
    assert status == 0, out
    sid = next(re.search(r"session (\S+) \(resume", line).group(1) for line in out if "(resume" in line)  # type: ignore[union-attr]
    first = len(trace.read_text(encoding="utf-8").splitlines())
    again = _args(tmp_path, session=sid)
    again.trace = str(trace)
    status, out = _run(again, [lambda sid: "hello again", lambda sid: "/quit"])
    assert status == 0, out
    events = [e for _, e in iter_events(str(trace))]
    assert len(events) > first and events[first]["prev"] == events[first - 1]["hash"]
    verdict = verify(iter_events(str(trace)))
    assert verdict.ok and not [n for n in verdict.notes if "restarts its chain" in n], (verdict.problem, verdict.notes)
