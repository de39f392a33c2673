"""The trace route shows `mcp.invoked` arguments masked where the contract says `sensitive`."""
from __future__ import annotations

import json
from pathlib import Path

from skillc.runtime.compiled.loader import load_compiled
from skillc.runtime.server.rest import masked


def test_sensitive_values_of_invoked_calls_are_masked(compiled: Path) -> None:
    studio = load_compiled(compiled)
    events = [{"seq": 1, "type": "task.planned", "task": "t1", "nodes": [{"node": "n2", "skill": "inv.invoice.issue"}]},
              {"seq": 2, "type": "mcp.invoked", "task": "t1", "node": "n2", "tool": "inv_invoice_issue",
               "args": {"orderInfo": {"taxNo": "91310000XX", "buyer": "Acme"}}},
              {"seq": 3, "type": "mcp.invoked", "task": "t1", "node": "n9", "tool": "inv_invoice_issue",
               "args": {"orderInfo": {"taxNo": "91310000YY"}}},
              {"seq": 4, "type": "mcp.invoked", "task": "t1", "node": "n2", "tool": "cms_space_list",
               "args": {"organId": 9}}]
    lines = [json.dumps(e) + "\n" for e in events]
    out = [json.loads(line) for line in masked(lines, studio)]
    assert out[1]["args"] == {"orderInfo": {"taxNo": "***", "buyer": "Acme"}}
    assert out[2]["args"] == {"orderInfo": {"taxNo": "***"}}  # node unknown: every skill's paths for the tool
    assert out[3] == events[3] and out[0] == events[0]
    later = [json.loads(line) for line in masked(lines, studio, after=1)]  # the plan is read, not shown
    assert [e["seq"] for e in later] == [2, 3, 4] and later[0]["args"]["orderInfo"]["taxNo"] == "***"
