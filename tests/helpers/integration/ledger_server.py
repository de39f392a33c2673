"""A tiny ledger MCP server (stdio) for the crash-recovery test: one write that can hang.

Every `tools/call` is recorded (tool, arguments, server pid) in the SQLite file `$LEDGER_DB`
before the tool does anything else, so a test can count invocations at the tool itself and poll
for "the write has reached the server". With `LEDGER_HANG=1`, `ledger_post` books the entry and
then never answers: the caller is killed while waiting, and the write did take effect.

Run: `python ledger_server.py` (stdio).
"""
from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from typing import Any

from mcp.server.mcpserver import MCPServer

SCHEMA = """
CREATE TABLE IF NOT EXISTS invocation (n INTEGER PRIMARY KEY AUTOINCREMENT, tool TEXT NOT NULL,
                                       args TEXT NOT NULL, pid INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS entry (ref TEXT PRIMARY KEY, amount INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS process (pid INTEGER NOT NULL);
"""


def open_db(path: str) -> sqlite3.Connection:
    """The record file, created on first use; autocommit, so every record is durable at once."""
    db = sqlite3.connect(path, isolation_level=None, timeout=10)
    db.execute("PRAGMA journal_mode=WAL")  # on a new file, make it before two servers open it at once
    db.executescript(SCHEMA)
    return db


def build_server(db_path: str, hang: bool, delay: float = 0.0) -> MCPServer:
    """The ledger server over `db_path`; with `hang`, `ledger_post` never answers; with `delay`,
    it records the call at once and books and answers `delay` seconds later (a slow business
    system: a verify meanwhile finds nothing)."""
    db = open_db(db_path)
    server = MCPServer("skillc-test-ledger")

    def record(tool: str, args: dict[str, Any]) -> None:
        db.execute("INSERT INTO invocation (tool, args, pid) VALUES (?, ?, ?)",
                   (tool, json.dumps(args, sort_keys=True), os.getpid()))

    @server.tool(title="Post a ledger entry")
    async def ledger_post(ref: str, amount: int) -> dict[str, Any]:
        """Book `amount` under the reference `ref`; 409 when the reference is already booked."""
        if delay:
            record("ledger_post", {"ref": ref, "amount": amount})
            await asyncio.sleep(delay)
            db.execute("BEGIN IMMEDIATE")
        else:  # the record and the booking commit together: whoever sees the invocation sees its effect
            db.execute("BEGIN IMMEDIATE")
            record("ledger_post", {"ref": ref, "amount": amount})
        booked = db.execute("SELECT 1 FROM entry WHERE ref = ?", (ref,)).fetchone() is not None
        if not booked:
            db.execute("INSERT INTO entry VALUES (?, ?)", (ref, amount))
        db.execute("COMMIT")
        if booked:
            return {"code": 409, "data": None, "msg": f"{ref} is already booked"}
        if hang:
            await asyncio.Event().wait()  # the entry is booked, the answer never comes
        return {"code": 200, "data": {"ref": ref, "amount": amount}, "msg": "booked"}

    @server.tool(title="Find a ledger entry")
    async def ledger_find(ref: str) -> dict[str, Any]:
        """The entry booked under `ref`; 404 when there is none (so a verify fails then)."""
        record("ledger_find", {"ref": ref})
        row = db.execute("SELECT ref, amount FROM entry WHERE ref = ?", (ref,)).fetchone()
        if row is None:
            return {"code": 404, "data": None, "msg": f"no entry {ref}"}
        return {"code": 200, "data": {"ref": row[0], "amount": row[1]}, "msg": "ok"}

    return server


def main() -> None:
    """Serve over stdio; the pid is recorded so the test can end a server orphaned by a kill
    (the SDK starts it in a session of its own)."""
    server = build_server(os.environ["LEDGER_DB"], os.environ.get("LEDGER_HANG") == "1",
                          float(os.environ.get("LEDGER_DELAY") or 0))
    open_db(os.environ["LEDGER_DB"]).execute("INSERT INTO process VALUES (?)", (os.getpid(),))
    server.run()


if __name__ == "__main__":
    main()
