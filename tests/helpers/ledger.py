"""The ledger studio and its counting MCP server, as the durability and audit tests use them: one
write (`ledger_post`) whose invocations the server counts in a file, and the scripted steps."""
from __future__ import annotations

from pathlib import Path

HELPERS = Path(__file__).resolve().parent
STUDIO = HELPERS / "integration" / "studios" / "ledger"
SERVER = HELPERS / "integration" / "ledger_server.py"
PLATFORM = {"userId": 7, "memberId": 70, "name": "alice", "organId": 9}
USER = "Book 420 under reference R-7001"
POST = {"call": {"tool": "ledger_post", "args": {"ref": "R-7001", "amount": 420}}}
APPROVE = {"call": {"tool": "builtin_node_approval", "args": {"summary": "Book R-7001", "toolName": "ledger_post"}}}
FINISH = {"call": {"tool": "builtin_node_finish", "args": {"output": "Booked R-7001"}}}


def compile_ledger(out: Path) -> Path:
    """The ledger studio compiled into `out` (every skill loads)."""
    from skillc.compiler.build import compile_studio

    assert not compile_studio(STUDIO, out).rejected
    return out
