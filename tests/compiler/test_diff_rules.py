"""`skillc diff` on a tool's rules: removed, loosened, changed and any guard change are risky;
added, tightened and a new message are not (docs/codegen.md). Both sides are compiled studios
read from their modules, never run."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from skillc.compiler.diff import diff

RULE = {"name": "pending", "when": "args.reason != 'other'", "let": {"o": "latest.get"},
        "expr": "o.status == 'pending'", "message": "Only a pending order can be cancelled."}
BASE: dict[str, Any] = {
    "target": "cancel",
    "tools": {
        "cancel": {"sideEffect": "WRITE", "idempotencyKey": ["id"],
                   "args": {"id": {"sources": ["USER"]}, "reason": {"sources": ["USER"]}},
                   "success": {"path": "code", "op": "EQ", "value": 0}, "rules": [RULE]},
        "get": {"args": {"id": {"sources": ["USER"]}}, "success": {"path": "status", "op": "EXISTS"}},
    },
}


def _studio(root: Path, contract: dict[str, Any]) -> Path:
    (root / "agents").mkdir(parents=True)
    (root / "agents" / "main.yaml").write_text(yaml.safe_dump({"agent_name": "Main", "skills": ["fx.cancel"]}))
    skill = root / "skills" / "fx.cancel"
    skill.mkdir(parents=True)
    (skill / "skill.yaml").write_text(yaml.safe_dump({"skill_name": "Cancel", "tools": ["cancel", "get"]}))
    (skill / "contract.jsonc").write_text(json.dumps(contract, indent=2))
    return root


def _rule(c: dict[str, Any]) -> dict[str, Any]:
    return c["tools"]["cancel"]["rules"][0]


EDITS: dict[str, tuple[Callable[[dict[str, Any]], None], str, bool]] = {
    "removed": (lambda c: c["tools"]["cancel"].pop("rules"), "rule.removed", True),
    "loosened": (lambda c: _rule(c).update(expr="o.status == 'pending' || o.status == 'processing'"), "rule.loosened", True),
    "changed": (lambda c: _rule(c).update(expr="o.status != 'delivered'"), "rule.changed", True),
    "let changed": (lambda c: _rule(c).update(let={"o": "evidence.get[1]"}), "rule.changed", True),
    "guard widened": (lambda c: _rule(c).update(when="args.reason != 'other' || args.id == 'x'"), "rule.guard_widened", True),
    "guard removed": (lambda c: _rule(c).pop("when"), "rule.guard_widened", True),
    "guard narrowed": (lambda c: _rule(c).update(when="args.reason != 'other' && args.id != 'x'"), "rule.guard_narrowed", True),
    "guard changed": (lambda c: _rule(c).update(when="args.id != 'x'"), "rule.guard_changed", True),
    "added": (lambda c: c["tools"]["cancel"]["rules"].append({**RULE, "name": "second", "expr": "has(o.id)"}), "rule.added", False),
    "tightened": (lambda c: _rule(c).update(expr="o.status == 'pending' && has(o.id)"), "rule.tightened", False),
    "message": (lambda c: _rule(c).update(message="Say it cannot be cancelled."), "rule.message", False),
    "spacing only": (lambda c: _rule(c).update(expr="o.status=='pending'"), "", False),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_rule_changes(edit: str, tmp_path: Path) -> None:
    fn, kind, risky = EDITS[edit]
    new = copy.deepcopy(BASE)
    fn(new)
    changes = diff(str(_studio(tmp_path / "old", BASE)), str(_studio(tmp_path / "new", new)))
    if not kind:
        assert changes == []
        return
    assert [(c.kind, c.risky, c.tool) for c in changes] == [(kind, risky, "cancel")], [c.message for c in changes]
