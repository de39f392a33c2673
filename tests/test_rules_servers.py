"""`skillc check --servers` for rules (SC711), against a real MCP server process (the annotated
test server, whose tools take only `id`): a rule reading an argument the tool's inputSchema does
not have is warned at that argument, inside the rule text."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.things_studio import annotated, things_studio
from skillc.main import run as skillc


def test_a_rule_reading_an_argument_no_schema_has(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    contract = {"tools": {
        "thing_put": {"sideEffect": "WRITE", "args": {"id": {"sources": ["USER"]}},
                      "success": {"path": "code", "op": "EQ", "value": 200},
                      "rules": [{"name": "small", "expr": "args.id > 0 && args.qty < 10", "message": "too many"}]},
        "thing_get": {"args": {"id": {"sources": ["USER"]}}, "success": {"path": "code", "op": "EQ", "value": 200}}}}
    config = things_studio(tmp_path, contract, annotated("things"))
    skill = tmp_path / "studio" / "skills" / "thing.keep"
    status = skillc(["check", "--servers", "--config", str(config), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    found = [d for d in doc["diagnostics"] if d["code"] == "SC711"]
    assert len(found) == 1, [(d["code"], d["message"]) for d in doc["diagnostics"]]
    d = found[0]
    assert d["severity"] == "warning" and "has no property 'qty'" in d["message"] and d["help"] == "properties are id"
    line = (skill / "contract.jsonc").read_text().splitlines()[d["line"] - 1]
    assert line[d["column"] - 1:d["end_column"] - 1] == "args.qty"
    assert status == 0
