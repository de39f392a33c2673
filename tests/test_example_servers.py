"""The demo MCP servers as real stdio subprocesses, started exactly as examples/skillc.toml says.

Each test lists the tools, calls a read and a write, checks the SQLite file changed, and checks
that a business failure comes back as a non-success `code` (not an MCP error).
"""
from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

CMS_TOOLS = {
    "cms_space_list", "cms_space_get", "cms_channel_list", "cms_article_search", "cms_article_get",
    "cms_article_list", "cms_article_check", "cms_article_create", "cms_article_rename",
    "cms_article_update", "cms_article_publish", "cms_tag_add", "cms_tag_find", "cms_page_create",
    "cms_page_get", "cms_page_list",
}
INVOICE_TOOLS = {
    "inv_order_list", "inv_order_get", "inv_invoice_issue", "inv_invoice_get", "inv_invoice_find",
    "inv_invoice_void",
}


def _server_params(name: str, tmp: Path) -> Any:
    """StdioServerParameters for `[mcp.servers.<name>]` of examples/skillc.toml, `{tmp}` filled in."""
    from mcp import StdioServerParameters

    entry = tomllib.loads((EXAMPLES / "skillc.toml").read_text(encoding="utf-8"))["mcp"]["servers"][name]
    # "python" in the config means this interpreter here: the one with skillc installed.
    command = sys.executable if entry["command"] == "python" else entry["command"]
    env = {k: v.replace("{tmp}", str(tmp)) for k, v in entry.get("env", {}).items()}
    return StdioServerParameters(command=command, args=list(entry.get("args", [])), env=env)


async def _call(client: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call a tool; return its structured content after checking the text content says the same."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, result
    assert result.structured_content is not None, f"{tool}: no structured content"
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def _count(db: Path, sql: str, *args: Any) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(sql, args).fetchone()[0])


def test_cms_server_over_stdio(tmp_path: Path) -> None:
    """CMS: tools listed with their argument names, read, write into SQLite, 404/409 failures."""
    from mcp import Client

    db = tmp_path / "cms.sqlite"

    async def run() -> None:
        async with Client(_server_params("cms", tmp_path)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == CMS_TOOLS
            create = tools["cms_article_create"].input_schema
            assert set(create["properties"]) == {"title", "spaceId", "authorId", "body"}
            # spaceId is governed by the contract (look it up first), so the schema leaves it optional
            assert set(create["required"]) == {"title", "authorId"}

            spaces = await _call(client, "cms_space_list", {"organId": 9})
            assert spaces["code"] == 200
            assert {"id": 3, "name": "Website", "organId": 9} in spaces["data"]

            before = _count(db, "SELECT COUNT(*) FROM article")
            created = await _call(client, "cms_article_create",
                                  {"title": "Spring launch", "spaceId": 3, "authorId": 7})
            assert created["code"] == 200
            assert created["data"] == {"id": 17, "title": "Spring launch", "spaceId": 3, "status": "DRAFT"}
            assert _count(db, "SELECT COUNT(*) FROM article") == before + 1
            assert _count(db, "SELECT COUNT(*) FROM article WHERE id = 17 AND author_id = 7") == 1

            tagged = await _call(client, "cms_tag_add", {"articleId": 17, "tag": "featured"})
            assert tagged["code"] == 200
            found = await _call(client, "cms_tag_find", {"articleId": 17, "tag": "featured"})
            assert found["data"]["found"] is True

            missing = await _call(client, "cms_article_get", {"articleId": 999})
            assert (missing["code"], missing["data"]) == (404, None)
            again = await _call(client, "cms_article_create",
                                {"title": "Spring launch", "spaceId": 3, "authorId": 7})
            assert again["code"] == 409
            assert _count(db, "SELECT COUNT(*) FROM article") == before + 1

    asyncio.run(run())


def test_invoice_server_over_stdio(tmp_path: Path) -> None:
    """Invoicing: nested orderInfo and lines[] arguments, issue then void, 4004/4009/2002 codes."""
    from mcp import Client

    db = tmp_path / "invoice.sqlite"

    async def run() -> None:
        async with Client(_server_params("invoice", tmp_path)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == INVOICE_TOOLS
            assert set(tools["inv_invoice_issue"].input_schema["properties"]) == {
                "orderNo", "orderInfo", "lines", "invoiceType", "remark"}

            order = await _call(client, "inv_order_get", {"orderNo": "SO-1001", "organId": 9})
            assert order["code"] == 0 and order["data"]["status"] == "OPEN"
            lines = [{"goodsCode": i["code"], "qty": i["qty"], "amount": i["amount"]} for i in order["data"]["items"]]

            issue = {"orderNo": "SO-1001", "lines": lines,
                     "orderInfo": {"taxNo": order["data"]["buyer"]["taxNo"], "buyerName": "Globex Ltd",
                                   "issuerId": 7, "organName": "Acme"}}
            issued = await _call(client, "inv_invoice_issue", issue)
            assert issued["code"] == 0, issued
            invoice_no = issued["data"]["invoiceNo"]
            assert issued["data"]["amount"] == 1820
            assert _count(db, "SELECT COUNT(*) FROM invoice WHERE invoice_no = ? AND status = 'ISSUED'",
                          invoice_no) == 1
            assert _count(db, "SELECT COUNT(*) FROM sales_order WHERE order_no = 'SO-1001'"
                              " AND status = 'INVOICED'") == 1

            twice = await _call(client, "inv_invoice_issue", issue)
            assert twice["code"] == 4009
            unknown = await _call(client, "inv_invoice_get", {"invoiceNo": "INV-404"})
            assert (unknown["code"], unknown["data"]) == (4004, None)
            cancelled = await _call(client, "inv_order_get", {"orderNo": "SO-1003", "organId": 9})
            assert cancelled["data"]["status"] == "CANCELLED"

            void = {"invoiceNo": invoice_no, "reason": "wrong buyer", "operatorId": 7, "deptPath": "/1/9"}
            assert (await _call(client, "inv_invoice_void", void))["code"] == 0
            assert (await _call(client, "inv_invoice_void", void))["code"] == 2002
            found = await _call(client, "inv_invoice_find", {"invoiceNo": invoice_no, "status": "VOIDED"})
            assert found["data"]["total"] == 1
            assert _count(db, "SELECT COUNT(*) FROM invoice WHERE invoice_no = ? AND status = 'VOIDED'",
                          invoice_no) == 1

    asyncio.run(run())


@pytest.mark.parametrize(("module", "bad"), [
    ("cms_server", ("cms_article_publish", {"articleId": 12, "channelId": 3, "publisherId": 7})),
    ("invoice_server", ("inv_invoice_issue", {"orderNo": "SO-1001", "lines": [{"goodsCode": "X", "qty": 1, "amount": 1}],
                                              "orderInfo": {"taxNo": "91310000MA1K3YJ12X", "buyerName": "G",
                                                            "issuerId": 7}})),
])
def test_business_rule_failures_in_process(tmp_path: Path, module: str, bad: tuple[str, dict[str, Any]]) -> None:
    """Cross-record rules (channel of another space; goods code not on the order) fail by code."""
    import importlib

    from mcp import Client

    server = importlib.import_module(f"skillc.examples.{module}").build_server(str(tmp_path / "db.sqlite"))

    async def run() -> dict[str, Any]:
        async with Client(server) as client:
            return await _call(client, *bad)

    answer = asyncio.run(run())
    assert answer["code"] in (409, 4001), answer
    assert answer["data"] is None
