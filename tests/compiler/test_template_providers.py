"""AgentTemplate.providers: the planner's view of the compiler's provider decisions (§7, issue 10)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillc.compiler import build, ir
from skillc.runtime.compiled.loader import ProviderInput, load_compiled


def _skill(key: str, contract: dict[str, Any]) -> ir.SkillProfile:
    return ir.SkillProfile(skill_key=key, skill_name=key, skill_contract=json.dumps(contract), tool_names=sorted(contract["tools"]))


def test_providers_keep_contract_order_and_unavailable_inputs(tmp_path: Path) -> None:
    # inputs in contract order z, a, self, cycle: edges alone (grouped by provider) would say a, z
    consumer = {"inputs": {"first": {"from": "shared.first", "provider": "z.prov"},
                           "second": {"from": "outputs.second", "provider": "a.prov"},
                           "own": {"provider": "m.consumer"},
                           "loop": {"provider": "c.loop"}}, "tools": {"q": {}}}
    loop = {"inputs": {"back": {"provider": "m.consumer"}}, "tools": {"q": {}}}
    studio = ir.Studio(
        agents=[ir.AgentProfile(agent_code="main", skills=["m.consumer", "z.prov", "a.prov", "c.loop"])],
        skills=[_skill("m.consumer", consumer), _skill("z.prov", {"tools": {"q": {}}}), _skill("a.prov", {"tools": {"q": {}}}),
                _skill("c.loop", loop)],
    )
    build.compile_studio(studio, tmp_path)
    providers = load_compiled(tmp_path).agents["main"].providers
    assert providers["m.consumer"] == (
        ProviderInput("first", "z.prov", "shared", (("k", "first"),)),
        ProviderInput("second", "a.prov", "outputs", None),
        ProviderInput("own", "m.consumer", reason="self"),
        ProviderInput("loop", "c.loop", reason="cycle"),
    )
    assert providers["c.loop"] == (ProviderInput("back", "m.consumer", reason="cycle"),)
    assert "z.prov" not in providers
