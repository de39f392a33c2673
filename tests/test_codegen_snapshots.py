"""syrupy snapshots of generated modules: a contract change shows up in review as a snapshot diff.

Update with `python -m pytest tests/test_codegen_snapshots.py --snapshot-update` and review the diff.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillc.compiler import codegen, ir
from skillc.compiler.frontend import check_skill
from skillc.compiler.sources import load_studio

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "studio"

FIXTURES = {
    "write_with_verify": {
        "mode": "REACT",
        "target": "doc_save",
        "inputs": {"space": {"from": "session.spaceId", "provider": "fx.space"}, "title": {}},
        "outputs": {"docId": {"share": "TASK", "entity": {"type": "doc", "scalar": "id"}, "sources": ["EVIDENCE"]}},
        "tools": {
            "doc_save": {
                "label": "Saving",
                "sideEffect": "WRITE",
                "idempotencyKey": ["spaceId", "title"],
                "args": {
                    "spaceId": {"from": "inputs.space", "label": "Space"},
                    "title": {"sources": ["USER", "MODEL"], "label": "Title"},
                    "ownerId": {"from": "platform.userId"},
                    "kind": {"const": {"type": "note", "tags": []}},
                    "lines[].sku": {"from": "inputs.items[].sku"},
                    "tagId": {"from": "evidence.tags.id", "when": "UNIQUE", "missing": {"action": "CALL_TOOL", "tool": "tag_list"}},
                    "level": {"sources": ["USER"], "enum": ["LOW", "HIGH"], "required": False},
                    "reason": {"sources": ["EVIDENCE"], "missing": {"action": "FAIL", "message": "no reason"}},
                },
                "success": {"path": "code", "op": "IN", "value": [0, "OK"]},
                "error": {"code": "code", "message": "msg"},
                "extracts": [{"key": "doc", "path": "data", "entity": {"type": "doc", "name": "title", "scalar": "id"}}],
                "verify": {"tool": "doc_get", "args": {"id": {"from": "call.id"}, "deep": {"const": True}}},
            },
            "doc_get": {"success": {"path": "data.id", "op": "EXISTS"}, "extracts": [{"path": "data", "fields": ["id"]}]},
            "tag_list": {"success": {"path": "data", "op": "TRUTHY"}, "extracts": [{"key": "tags", "path": "data.records"}]},
        },
    },
    "read_only": {"delegatable": True, "tools": {"q": {"args": {"kw": {"sources": ["USER"]}}}}},
}


def _generate(profile: ir.SkillProfile) -> str:
    contract, diags = check_skill(profile)
    assert contract is not None, [d.message for d in diags]
    return codegen.generate_module(profile, contract)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixture_module(name: str, snapshot) -> None:  # noqa: ANN001 - syrupy fixture
    contract = FIXTURES[name]
    profile = ir.SkillProfile(skill_key=f"fx.{name}", skill_name=name, skill_contract=json.dumps(contract, indent=2),
                              tool_names=sorted(contract["tools"]))
    assert _generate(profile) == snapshot


@pytest.mark.parametrize("key", sorted(p.name for p in (EXAMPLE / "skills").iterdir() if (p / "contract.jsonc").is_file()))
def test_example_studio_module(key: str, snapshot) -> None:  # noqa: ANN001 - syrupy fixture
    profile = next(s for s in load_studio(EXAMPLE).skills if s.skill_key == key)
    assert _generate(profile) == snapshot
