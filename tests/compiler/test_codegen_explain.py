"""`skillc explain`'s static checks: what §16 leaves to the author."""
from __future__ import annotations

import json
from typing import Any

from skillc.compiler import ir
from skillc.compiler.explain import explain
from skillc.compiler.frontend import check_skill


def _explain(contract: dict[str, Any], tools: list[str]) -> tuple[list[str], list[str]]:
    profile = ir.SkillProfile(skill_key="t.s", skill_contract=json.dumps(contract, indent=1), tool_names=tools)
    parsed, diags = check_skill(profile)
    assert parsed is not None, [d.message for d in diags]
    lines, warnings = explain(profile, parsed)
    return lines, [w.code for w in warnings]


def test_unsatisfiable_and_loops_and_outside_tool_names() -> None:
    contract = {
        "target": "w",
        "tools": {
            "w": {
                "sideEffect": "WRITE",
                "success": {"path": "code", "op": "EQ", "value": 0},
                "verify": {"tool": "check"},
                "args": {
                    "never": {"sources": ["PLATFORM"]},
                    "empty": {},
                    "loop": {"from": "session.x", "sources": ["USER"]},
                    "fetch": {"sources": ["EVIDENCE"], "missing": {"action": "CALL_TOOL", "tool": "lookup"}},
                    "self": {"sources": ["EVIDENCE"], "missing": {"action": "CALL_TOOL", "tool": "w"}},
                    "fine": {"sources": ["USER"]},
                    "optional": {"required": False},
                    "bound": {"from": "platform.userId"},
                },
            },
            "check": {"success": {"path": "data", "op": "TRUTHY"}},
        },
    }
    lines, codes = _explain(contract, [])
    assert sorted(codes) == ["SC411", "SC411", "SC412", "SC413", "SC413", "SC414", "SC415"]
    assert any("arg never" in line for line in lines) and any("tool w [WRITE, confirm, not in toolNames" in line for line in lines)
    _, clean = _explain(contract, ["w", "check", "lookup"])
    assert sorted(clean) == ["SC411", "SC411", "SC412", "SC413"]
