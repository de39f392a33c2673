"""The retail example (examples/retail/): its demo shop as a real stdio MCP server started as
examples/retail/skillc.toml says, counted by the writes it logs; its studio strict-clean and
naming only tools and arguments the shop serves; its scenarios' canned tool answers exactly what
the shop answers to the calls they send.
"""
from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from skillc.main import run as skillc

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RETAIL = EXAMPLES / "retail"
SHOP_TOOLS = {
    "find_user_id_by_email", "find_user_id_by_name_zip", "get_user_details", "get_order_details",
    "get_product_details", "check_order_status", "cancel_pending_order", "modify_pending_order_address",
    "return_delivered_order_items", "exchange_delivered_order_items", "transfer_to_human_agents",
}
WRITES = {"cancel_pending_order", "modify_pending_order_address", "return_delivered_order_items",
          "exchange_delivered_order_items", "transfer_to_human_agents"}


def server_params(tmp: Path) -> Any:
    """StdioServerParameters for `[mcp.servers.retail]` of examples/retail/skillc.toml."""
    from mcp import StdioServerParameters

    entry = tomllib.loads((RETAIL / "skillc.toml").read_text(encoding="utf-8"))["mcp"]["servers"]["retail"]
    # "python" in the config means this interpreter here: the one with skillc installed.
    command = sys.executable if entry["command"] == "python" else entry["command"]
    env = {k: v.replace("{tmp}", str(tmp)) for k, v in entry.get("env", {}).items()}
    return StdioServerParameters(command=command, args=list(entry.get("args", [])), env=env)


async def call(client: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """A tool's structured answer, after checking its text content says the same."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, result  # a refusal is an answer, never an MCP error
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def writes(db: Path) -> list[str]:
    """The tools of the writes the shop logged, in order."""
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute("SELECT tool FROM write_log ORDER BY seq")]


def test_retail_server_over_stdio_enforces_outcomes_and_logs_each_write(tmp_path: Path) -> None:
    """Reads answer records; each refused write answers `{error, message}` and logs nothing; each
    accepted one logs exactly one write and changes the records the way the policy says."""
    from mcp import Client

    db = tmp_path / "retail.sqlite"

    async def run() -> None:
        async with Client(server_params(tmp_path)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == SHOP_TOOLS
            assert set(tools["exchange_delivered_order_items"].input_schema["required"]) == {
                "order_id", "item_ids", "new_item_ids", "payment_method_id"}

            assert await call(client, "find_user_id_by_email", {"email": "Mei.Tanaka@example.org"}) == {
                "user_id": "mei_tanaka_4821"}
            assert await call(client, "find_user_id_by_name_zip",
                              {"first_name": "lucia", "last_name": "Ferreira", "zip": "02139"}) == {
                "user_id": "lucia_ferreira_5590"}
            assert (await call(client, "find_user_id_by_email", {"email": "nobody@example.org"}))["error"] == "not_found"
            mei = await call(client, "get_user_details", {"user_id": "mei_tanaka_4821"})
            assert mei["payment_methods"]["gift_card_5530218"] == {"id": "gift_card_5530218", "source": "gift_card",
                                                                   "balance": 25.0}
            lamp = await call(client, "get_product_details", {"product_id": "6048372915"})
            assert lamp["variants"]["3318204758"]["available"] is False
            assert writes(db) == []

            # refused writes: nothing logged, nothing changed
            refused = [
                ("cancel_pending_order", {"order_id": "#R4830012", "reason": "no longer needed"}, "invalid_state"),
                ("cancel_pending_order", {"order_id": "#R4830027", "reason": "too expensive"}, "invalid_argument"),
                ("cancel_pending_order", {"order_id": "#R0000000", "reason": "no longer needed"}, "not_found"),
                ("return_delivered_order_items", {"order_id": "#R6012733", "item_ids": ["4408127365"],
                                                  "payment_method_id": "paypal_2219087"}, "invalid_argument"),
                ("return_delivered_order_items", {"order_id": "#R6012733", "item_ids": ["4408127365"],
                                                  "payment_method_id": "gift_card_5530218"}, "not_found"),
                ("return_delivered_order_items", {"order_id": "#R6012733", "item_ids": ["4408127365", "4408127365"],
                                                  "payment_method_id": "credit_card_6620193"}, "not_found"),
                ("exchange_delivered_order_items", {"order_id": "#R7001845", "item_ids": ["5502918348"],
                                                    "new_item_ids": ["5502918349"],
                                                    "payment_method_id": "gift_card_9902716"}, "insufficient_balance"),
                ("exchange_delivered_order_items", {"order_id": "#R7001845", "item_ids": ["5502918348"],
                                                    "new_item_ids": ["5502918350"],
                                                    "payment_method_id": "credit_card_1184420"}, "not_found"),
                ("modify_pending_order_address", {"order_id": "#R4830035", "address1": "1 Main St", "address2": "",
                                                  "city": "Salem", "state": "OR", "country": "USA", "zip": "97301"},
                 "invalid_state"),
            ]
            for tool, args, code in refused:
                answer = await call(client, tool, args)
                assert answer["error"] == code, (tool, args, answer)
                assert answer["message"].startswith("Error: ")
            assert writes(db) == []
            assert (await call(client, "get_order_details", {"order_id": "#R4830012"}))["status"] == "delivered"

            # accepted writes, one log row each
            cancelled = await call(client, "cancel_pending_order", {"order_id": "#R4830027", "reason": "no longer needed"})
            assert cancelled["status"] == "cancelled"
            assert cancelled["payment_history"][-1] == {"transaction_type": "refund", "amount": 64.5,
                                                        "payment_method_id": "gift_card_5530218"}
            mei = await call(client, "get_user_details", {"user_id": "mei_tanaka_4821"})
            assert mei["payment_methods"]["gift_card_5530218"]["balance"] == 89.5  # gift cards: refunded at once
            assert (await call(client, "cancel_pending_order",
                               {"order_id": "#R4830027", "reason": "no longer needed"}))["error"] == "invalid_state"
            assert (await call(client, "check_order_status", {"order_id": "#R4830027", "status": "cancelled"}))["matches"]

            exchanged = await call(client, "exchange_delivered_order_items", {
                "order_id": "#R7001845", "item_ids": ["5502918348"], "new_item_ids": ["5502918349"],
                "payment_method_id": "credit_card_1184420"})
            assert (exchanged["status"], exchanged["exchange_price_difference"]) == ("exchange requested", 15.0)
            returned = await call(client, "return_delivered_order_items", {
                "order_id": "#R6012733", "item_ids": ["4408127365"], "payment_method_id": "credit_card_6620193"})
            assert returned["status"] == "return requested"
            moved = await call(client, "modify_pending_order_address", {
                "order_id": "#R6012740", "address1": "12 Elm Street", "address2": "", "city": "Somerville",
                "state": "MA", "country": "USA", "zip": "02143"})
            assert moved["address"]["city"] == "Somerville" and moved["status"] == "pending"
            handed = await call(client, "transfer_to_human_agents", {"summary": "wants a price match"})
            assert handed["transferred"] is True

            assert writes(db) == ["cancel_pending_order", "exchange_delivered_order_items",
                                  "return_delivered_order_items", "modify_pending_order_address",
                                  "transfer_to_human_agents"]

            # the contracts name only tools the shop serves, with argument names its schemas have
            for skill, contract in studio_contracts():
                for tool, spec in contract["tools"].items():
                    assert tool in tools, (skill, tool)
                    served = set(tools[tool].input_schema.get("properties", {}))
                    for path in spec.get("args", {}):
                        assert re.split(r"[.\[]", path)[0] in served, (skill, tool, path)

    asyncio.run(run())


def test_retail_server_starts_from_the_seed_every_run(tmp_path: Path) -> None:
    """A fresh database file is seeded; an existing one is reopened as it was (the `{tmp}` of the
    config is what makes every run start from the seed)."""
    import importlib

    from mcp import Client

    shop = importlib.import_module("skillc.examples.retail_server")
    db = tmp_path / "shop.sqlite"

    async def cancel_then_read(server: Any) -> str:
        async with Client(server) as client:
            await call(client, "cancel_pending_order", {"order_id": "#R5120456", "reason": "ordered by mistake"})
            return (await call(client, "get_order_details", {"order_id": "#R5120456"}))["status"]

    assert asyncio.run(cancel_then_read(shop.build_server(str(db)))) == "cancelled"
    assert asyncio.run(cancel_then_read(shop.build_server(str(db)))) == "cancelled"
    assert writes(db) == ["cancel_pending_order"]  # the second attempt was refused: not pending
    fresh = tmp_path / "other.sqlite"
    assert asyncio.run(cancel_then_read(shop.build_server(str(fresh)))) == "cancelled"
    assert writes(fresh) == ["cancel_pending_order"]


def studio_contracts() -> list[tuple[str, dict[str, Any]]]:
    """(skill key, contract) of every skill of the retail studio, comments stripped."""
    from skillc.compiler.jsonc import parse_json, plain

    out = []
    for path in sorted((RETAIL / "studio" / "skills").glob("*/contract.jsonc")):
        tree, problems = parse_json(path.read_text(encoding="utf-8"), file=str(path))
        assert tree is not None and not problems, problems
        out.append((path.parent.name, plain(tree)))
    return out


def test_every_write_of_the_retail_studio_is_gated() -> None:
    """Each shop write is a WRITE with success and error paths; all but the handover wait for
    approval and carry an idempotency key."""
    seen = set()
    for skill, contract in studio_contracts():
        for tool, spec in contract["tools"].items():
            if tool not in WRITES:
                assert spec.get("sideEffect", "NONE") == "NONE", (skill, tool)
                continue
            seen.add(tool)
            assert spec["sideEffect"] == "WRITE" and spec["success"] and spec["error"], (skill, tool)
            if tool != "transfer_to_human_agents":
                assert spec.get("confirm", True) is True and spec["idempotencyKey"], (skill, tool)
    assert seen == WRITES


@pytest.mark.parametrize("studio", [RETAIL / "studio", EXAMPLES / "studio"], ids=["retail", "example"])
def test_both_example_studios_are_clean_under_strict(studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert skillc(["check", "--strict", str(studio)]) == 0, capsys.readouterr().out
    assert "0 errors, 0 warnings" in capsys.readouterr().out


def test_check_servers_finds_the_studio_and_the_shop_agree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """README's `skillc check --servers --config examples/retail/skillc.toml`, with its `python`
    made this interpreter: every toolName is served, nothing disagrees, strict."""
    config = tmp_path / "skillc.toml"
    text = (RETAIL / "skillc.toml").read_text(encoding="utf-8")
    text = text.replace('source = "studio"', f"source = {json.dumps(str(RETAIL / 'studio'))}")
    text = text.replace('command = "python"', f"command = {json.dumps(sys.executable)}")
    config.write_text(text + "\n[mcp]\nconnect_timeout = 90\n", encoding="utf-8")
    assert skillc(["check", "--servers", "--strict", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "server retail: 11 tools: cancel_pending_order, check_order_status," in out
    assert "6 loaded, 0 rejected; 0 errors, 0 warnings" in out


def test_every_read_contract_is_the_lookup_skills_own() -> None:
    """A read judged the same in every skill: replay and a reviewer can pick any skill holding
    the tool and get the same provenance and extracts as retail.customer.lookup gives."""
    contracts = dict(studio_contracts())
    reads = contracts.pop("retail.customer.lookup")["tools"]
    compared = 0
    for skill, contract in contracts.items():
        for tool, spec in contract["tools"].items():
            if tool in reads:
                assert spec == reads[tool], (skill, tool)
                compared += 1
    assert compared == 17


SCENARIOS = sorted((RETAIL / "scenarios").glob("*.yaml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_a_scenarios_canned_answers_are_the_shops_own(path: Path, tmp_path: Path) -> None:
    """The scenario passes, and replaying the calls it sent (its `mcp.invoked`, in order) on a
    freshly seeded shop answers each one with the canned response the scenario served it: the
    scenarios play against the shop's real behaviour, without a process to start under load."""
    import yaml
    from mcp import Client

    from skillc.examples.retail_server import build_server
    from skillc.scenario.runner import report, run_scenario

    result = asyncio.run(run_scenario(path))
    assert result.ok, report(result)
    canned = {t["name"]: [r["json"] for r in t.get("responses", [])]
              for t in yaml.safe_load(path.read_text(encoding="utf-8"))["tools"]}
    sent = [(e["tool"], e["args"]) for e in result.events if e["type"] == "mcp.invoked"]
    assert sent, "the scenario sends nothing to the shop"

    async def replay() -> None:
        served: dict[str, int] = {}
        async with Client(build_server(str(tmp_path / "shop.sqlite"))) as client:
            for tool, args in sent:
                k = served[tool] = served.get(tool, -1) + 1
                answers = canned[tool]
                assert answers, f"{tool} was called but the scenario gives it no response"
                shop = (await client.call_tool(tool, args)).structured_content
                assert answers[min(k, len(answers) - 1)] == shop, (tool, args)

    asyncio.run(replay())


def test_every_rule_of_the_studio_refuses_in_some_scenario() -> None:
    """Each rule the retail contracts state is shown stopping a mistake: some scenario expects a
    refusal whose message carries `[rule_name]`."""
    rules = {rule["name"] for _, contract in studio_contracts() for spec in contract["tools"].values()
             for rule in spec.get("rules", [])}
    import yaml

    shown = set()
    for path in SCENARIOS:
        for turn in yaml.safe_load(path.read_text(encoding="utf-8"))["turns"]:
            for expected in turn.get("expect", []):
                if expected.get("type") == "tool.call" and expected.get("error") == "RULE_VIOLATED":
                    message = expected["message"]
                    shown |= set(re.findall(r"\[(\w+)\]", message if isinstance(message, str) else message["$contains"]))
    assert len(rules) == 16
    assert rules <= shown, sorted(rules - shown)
