"""An approval shows each item of a list argument as a row (§14.1's parameter summary): the
summary text (what the CLI prompt and the console card print) numbers one line per passenger,
and the AG-UI interrupt carries the same lists as tables, so a reviewer can tell whose date of
birth is whose. Sensitive values stay masked and platform-injected ones hidden."""
from __future__ import annotations

import asyncio
from pathlib import Path

from skillc.runtime.call.gate import approval_summary, approval_tables
from skillc.runtime.server.interrupts import interrupt_of
from skillc.runtime.compiled.skillmeta import ArgMeta, ToolMeta

from helpers.node_harness import PLATFORM, Harness, agent, skill, step


def _arg(path: str, **kw: object) -> ArgMeta:
    parts = tuple(("e",) if seg == "[]" else ("k", seg) for seg in path.replace("[]", ".[]").split(".") if seg)
    return ArgMeta(path=path, parts=parts, **kw)  # type: ignore[arg-type]


META = ToolMeta(name="book", args={
    "title": _arg("title", label="Title"),
    "passengers[].first_name": _arg("passengers[].first_name", label="First name"),
    "passengers[].dob": _arg("passengers[].dob", label="Date of birth"),
    "passengers[].passport": _arg("passengers[].passport", label="Passport", sensitive=True),
    "passengers[].org": _arg("passengers[].org", platform=True),
    "tags[]": _arg("tags[]", label="Tags"),
})
ARGS = {"title": "Trip", "tags": ["a", "b"], "note": "aisle",
        "passengers": [{"first_name": "Ava", "dob": "1990-01-02", "passport": "P1", "org": 9, "last_name": "Li"},
                       {"first_name": "Noah", "dob": "1985-05-05", "passport": "P2", "org": 9}]}


def test_the_summary_has_one_line_per_item() -> None:
    assert approval_summary(META, ARGS) == "\n".join([
        "Title: Trip",
        "passengers:",
        "  1. First name: Ava · Date of birth: 1990-01-02 · Passport: *** · last_name: Li",
        "  2. First name: Noah · Date of birth: 1985-05-05 · Passport: ***",
        "Tags: a, b",  # one field per item: a plain list reads as it did
        "note: aisle",
    ])


def test_the_tables_carry_the_same_rows() -> None:
    assert approval_tables(META, ARGS) == [{
        "list": "passengers", "columns": ["First name", "Date of birth", "Passport", "last_name"],
        "rows": [["Ava", "1990-01-02", "***", "Li"], ["Noah", "1985-05-05", "***", ""]]}]


BOOK = """{
  "tools": {
    "air_book": { "sideEffect": "WRITE",
                  "args": { "passengers[].first_name": { "sources": ["MODEL"], "label": "First name" },
                            "passengers[].dob": { "sources": ["MODEL"], "label": "Date of birth" } },
                  "success": { "path": "ok", "op": "TRUTHY" } }
  }
}"""


def test_the_agui_interrupt_carries_the_tables(tmp_path: Path) -> None:
    studio = {"agents": [agent("airline", ["air.book"])], "skills": [skill("air.book", ["air_book"], BOOK)]}
    h = Harness(tmp_path, studio, {"air_book": {"responses": [{"ok": True}]}})
    passengers = [{"first_name": "Ava", "dob": "1990-01-02"}, {"first_name": "Noah", "dob": "1985-05-05"}]

    async def scenario() -> None:
        s = await h.runtime.open_session(PLATFORM, session_id="s1")
        h.script.add([step(("air_book", {"passengers": passengers})),
                      step(("builtin_node_approval", {"summary": "Book for Ava and Noah", "toolName": "air_book"}))])
        reply = await s.send("Book Ava and Noah")
        assert reply.suspended and reply.kind == "APPROVAL"
        seen = interrupt_of(s, b"key")
        assert seen is not None and seen.metadata is not None
        assert seen.metadata["tables"] == [{"list": "passengers", "columns": ["First name", "Date of birth"],
                                            "rows": [["Ava", "1990-01-02"], ["Noah", "1985-05-05"]]}]
        assert "1. First name: Ava · Date of birth: 1990-01-02\n  2. First name: Noah" in seen.message
        assert s.pending() is not None and "2. First name: Noah · Date of birth: 1985-05-05" in s.pending()["question"]
        await h.runtime.aclose()

    asyncio.run(scenario())
