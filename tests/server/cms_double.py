"""A stand-in for the example CMS server's two lifecycle tools, with gates the server tests hold.

`cms_space_list` waits while `$GATE_DIR/hold` exists and `$GATE_DIR/release` does not (so a test
can keep a run busy, deterministically, and let it go); `cms_article_create` never answers for a
title containing "hang" (the gateway's timeout makes the write's outcome unknown: VERIFY).
Run: `python cms_double.py` (stdio).
"""
from __future__ import annotations

import asyncio
import itertools
import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("skillc-test-cms-double")
_ids = itertools.count(17)


def _gate() -> Path:
    return Path(os.environ.get("GATE_DIR", "."))


@server.tool(title="List spaces")
async def cms_space_list(organId: int) -> dict[str, Any]:
    """The caller's spaces."""
    gate = _gate()
    while (gate / "hold").exists() and not (gate / "release").exists():
        await asyncio.sleep(0.01)  # the test holds this call: it is the run that stays busy
    return {"code": 200, "data": [{"id": 3, "name": "Website", "organId": organId}], "msg": "ok"}


@server.tool(title="Create article")
async def cms_article_create(title: str, authorId: int, spaceId: int | None = None, body: str = "") -> dict[str, Any]:
    """Create an article."""
    if "hang" in title:
        await asyncio.Event().wait()  # never answers: the caller's timeout decides
    return {"code": 200, "data": {"id": next(_ids), "title": title, "spaceId": spaceId, "status": "DRAFT"},
            "msg": "created"}


if __name__ == "__main__":
    server.run()
