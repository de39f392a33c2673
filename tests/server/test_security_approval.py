"""Finding 2: the executed call is the approved bound call. An approval asked for a write bound with
`deptPath: /sales` must never run that write with `/legal` after the session is reopened under a
new identity: the re-bound arguments differ from what the user saw, so the CONFIRM is stale and the
question is asked again. Finding 13: the confirming turn reports the progress label of the write it
sends, as the gated attempt before it did."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from skillc.runtime.server.interrupts import approval_digest, interrupt_of
from skillc.runtime.session import Runtime

from helpers.node_harness import PLATFORM, Harness, agent, skill, step

VOID = """{
  "tools": {
    "invoice_void": { "sideEffect": "WRITE", "label": "Voiding the invoice",
                      "args": { "invoiceNo": { "sources": ["MODEL"], "label": "Invoice" },
                                "deptPath": { "from": "platform.deptPath" } },
                      "success": { "path": "code", "op": "EQ", "value": 0 } }
  }
}"""
KEY = b"test-digest-key"


def harness(tmp: Path) -> Harness:
    studio = {"agents": [agent("clerk", ["inv.void"])], "skills": [skill("inv.void", ["invoice_void"], VOID)]}
    return Harness(tmp, studio, {"invoice_void": {"responses": [{"code": 0}]}})


async def _asked(h: Harness, platform: dict[str, Any]) -> Any:
    s = await h.runtime.open_session(platform, session_id="s1")
    h.script.add([step(("invoice_void", {"invoiceNo": "INV-7"})),
                  step(("builtin_node_approval", {"summary": "Void INV-7", "toolName": "invoice_void"}))])
    reply = await s.send("Void invoice INV-7")
    assert reply.suspended and reply.kind == "APPROVAL"
    return s


def test_a_confirm_after_a_restart_with_other_platform_fields_is_asked_again(tmp_path: Path) -> None:
    h = harness(tmp_path)
    sales, legal = dict(PLATFORM, deptPath="/sales"), dict(PLATFORM, deptPath="/legal")

    async def scenario() -> None:
        first = await _asked(h, sales)
        seen = interrupt_of(first, KEY)
        assert seen is not None and seen.metadata is not None
        approved = seen.metadata["digest"]
        assert approved == approval_digest(KEY, "invoice_void", {"invoiceNo": "INV-7", "deptPath": "/sales"})
        # the server restarts; Alice comes back signed with another department
        again = Runtime(h.compiled, h.gateway, h.model, h.store, h.settings, clock=lambda: h.now, seed=7,
                        on_progress=lambda tool, label: h.progress.append((tool, label)))
        s = await again.open_session(legal, session_id="s1")
        still = interrupt_of(s, KEY)
        assert still is not None and still.metadata is not None and still.metadata["digest"] == approved
        reply = await s.answer({"decision": "CONFIRM", "digest": approved})
        assert h.gateway.calls == []  # nothing ran with arguments nobody approved
        assert reply.suspended and reply.kind == "APPROVAL"  # asked again, for what would run now
        fresh = interrupt_of(s, KEY)
        assert fresh is not None and fresh.metadata is not None
        assert fresh.metadata["digest"] == approval_digest(KEY, "invoice_void", {"invoiceNo": "INV-7", "deptPath": "/legal"})
        assert fresh.metadata["digest"] != approved
        assert fresh.message == seen.message  # the same question: the runtime asked, no model step
        h.script.add([step(("builtin_node_finish", {"output": "Voided"}))])
        reply = await s.answer({"decision": "CONFIRM", "digest": fresh.metadata["digest"]})
        assert not reply.suspended and reply.text == "Voided"
        assert h.gateway.calls == [("invoice_void", {"invoiceNo": "INV-7", "deptPath": "/legal"})]
        await again.aclose()

    asyncio.run(scenario())


def test_an_unchanged_confirm_runs_once_and_reports_its_progress_label(tmp_path: Path) -> None:
    h = harness(tmp_path)

    async def scenario() -> None:
        s = await _asked(h, dict(PLATFORM, deptPath="/sales"))
        assert h.progress == [("invoice_void", "Voiding the invoice")]  # the gated attempt
        h.progress.clear()
        h.script.add([step(("builtin_node_finish", {"output": "Voided"}))])
        reply = await s.answer({"decision": "CONFIRM"})
        assert not reply.suspended and reply.text == "Voided"
        assert h.gateway.calls == [("invoice_void", {"invoiceNo": "INV-7", "deptPath": "/sales"})]
        assert h.progress == [("invoice_void", "Voiding the invoice")]  # the write this turn sent

    asyncio.run(scenario())
