"""`skillc check --servers` for rules, against real MCP server processes: a rule reading an
argument the tool's inputSchema does not have (SC711, the annotated test server, whose tools take
only `id`), or an evidence field the tool's outputSchema never has (SC712, the demo shop's
server), is warned at that read, inside the rule text."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

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


RETAIL = ("[mcp.servers.retail]\n"
          f"command = {json.dumps(sys.executable)}\n"
          'args = ["-m", "skillc.examples.retail_server"]\n'
          'env = { RETAIL_DB = "{tmp}/retail.sqlite" }\n')


def test_a_rule_reading_an_evidence_field_no_answer_has(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SC712 against the demo shop's server process, whose tools declare their outputSchemas
    (examples/retail_shapes.py): a field read from `latest`, through a macro over `evidence`, a
    nested object and a `let` is warned where the rule reads it; the fields the answers have,
    `has()` and `origin()` (the shop's item options are a map: any field may hold a value) are not."""
    order_arg = {"order_id": {"sources": ["USER", "EVIDENCE"]}}
    rules = [
        {"name": "pending", "expr": "latest.get_order_details.state == 'pending'", "message": "m"},
        {"name": "priced", "expr": "evidence.get_order_details.exists(o, o.order_id == args.order_id && "
                                   "o.items.all(i, i.cost > 0.0))", "message": "m"},
        {"name": "shipped_to", "expr": "latest.get_order_details.address.postcode != ''", "message": "m"},
        {"name": "placed", "let": {"order": "latest.get_order_details"},
         "expr": "order.status == 'pending' && order.placed != ''", "message": "m"},
        {"name": "fine", "when": "has(latest.get_order_details.refund)",
         "expr": "latest.get_order_details.status == 'pending' && latest.get_order_details.address.zip != '' && "
                 "latest.get_order_details.items.map(i, i.options).size() > 0 && origin(args.order_id).anything == 1",
         "message": "m"},
    ]
    contract = {"tools": {
        "get_order_details": {"args": order_arg, "success": {"path": "order_id", "op": "EXISTS"}},
        "cancel_pending_order": {"sideEffect": "WRITE", "args": {**order_arg, "reason": {"sources": ["USER"]}},
                                 "success": {"path": "status", "op": "EQ", "value": "cancelled"}, "rules": rules}}}
    config = things_studio(tmp_path, contract, RETAIL)
    skill = tmp_path / "studio" / "skills" / "thing.keep"
    status = skillc(["check", "--servers", "--config", str(config), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert not [d for d in doc["diagnostics"] if d["code"] == "SC604"], doc["diagnostics"]
    found = [d for d in doc["diagnostics"] if d["code"] == "SC712"]
    lines = (skill / "contract.jsonc").read_text().splitlines()
    under = [lines[d["line"] - 1][d["column"] - 1:d["end_column"] - 1] for d in found]
    assert under == ["latest.get_order_details.state", "i.cost", "latest.get_order_details.address.postcode",
                     "order.placed"], [(d["message"], u) for d, u in zip(found, under)]
    first = found[0]
    assert first["severity"] == "warning" and first["message"].startswith("tools.cancel_pending_order.rules[0].expr: "
                                                                         "latest.get_order_details has no field 'state'")
    assert "status" in first["help"] and "order_id" in first["help"]
    assert "evidence.get_order_details[].items[] has no field 'cost'" in found[1]["message"]
    assert "help" in found[2] and found[2]["help"] == "fields there are address1, address2, city, country, state, zip"
    assert found[3]["message"].startswith("tools.cancel_pending_order.rules[3].expr: latest.get_order_details has no")
    assert status == 0  # warnings


def test_origin_is_followed_only_when_every_answer_is_declared_completely() -> None:
    from skillc.compiler.rules_outputs import OutputReads, origin_fields
    from skillc.compiler.rules_syntax import parse_rule_expr

    def closed(**props: Any) -> dict[str, Any]:
        return {"type": "object", "properties": props, "additionalProperties": False}

    user = closed(user_id={"type": "string"}, methods={"type": "object", "additionalProperties": closed(
        id={"type": "string"}, balance={"type": "number"})})
    outputs: dict[str, Any] = {"get_user": user, "get_order": closed(order_id={}, status={})}
    fields = origin_fields(outputs)
    assert fields == ("balance", "id", "methods", "order_id", "status", "user_id")

    def unread(text: str, outs: dict[str, Any]) -> list[str]:
        reads = OutputReads(outs, origin_fields(outs))
        reads.shape(parse_rule_expr(text), {})
        return [u.field for u in reads.unread]

    assert unread("origin(args.pm).balance > 0 && origin(args.pm).limit > 0", outputs) == ["limit"]
    assert unread("latest.get_user.methods[args.pm].limit > 0", outputs) == ["limit"]  # a map's values
    assert unread("origin(args.pm).limit > 0", {**outputs, "other": None}) == []  # one tool undeclared
    assert unread("origin(args.pm).limit > 0", {**outputs, "tags": {"type": "object", "additionalProperties":
                                                                    {"type": "string"}}}) == []  # a map of scalars
    refs = {"$defs": {"Order": closed(status={})}, "type": "object", "properties": {"order": {"$ref": "#/$defs/Order"}},
            "additionalProperties": False}
    from skillc.compiler.rules_outputs import inline_refs
    assert unread("latest.t.order.state == ''", {"t": inline_refs(refs)}) == ["state"]
    assert unread("latest.t.order.state == ''", {"t": {"type": "object", "properties": {"order": {}}}}) == []
