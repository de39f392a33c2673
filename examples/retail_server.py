"""A demo online shop's customer-service back end as a real MCP server: customers, orders and
products in SQLite, seeded from `retail/seed.json`.

Reads answer the record itself (`get_order_details` answers the order, `get_user_details` the
profile); a refused request answers `{"error": "<code>", "message": "Error: …"}`, never an MCP
error, so a contract's `success`/`error` decide what counts (spec §6). Codes: `not_found`,
`invalid_state` (the order is not in a status that allows it), `invalid_argument`,
`insufficient_balance`. The back end checks what a real order system checks (status, reason,
items on the order, the payment method on the order's customer, a gift card's balance); it cannot
know who the agent authenticated, so "this order belongs to the customer I am talking to" is the
agent's to check (the contracts' rules do). Every write that changes something is appended to the
`write_log` table, so tests count writes.

The database path comes from `--db`, else `RETAIL_DB`, else `skillc-retail.sqlite` in the system
temp folder; it is created and seeded on first start.

Run: `python -m skillc.examples.retail_server` (stdio) or `… --http PORT` (streamable HTTP on
127.0.0.1).
"""
from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections import Counter
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from skillc.examples.retail_shapes import OUTPUT_SCHEMAS
from skillc.examples.serving import serve_main

SEED = Path(__file__).resolve().parent / "retail" / "seed.json"
CANCEL_REASONS = ("no longer needed", "ordered by mistake")
# What a verify call may ask about (check_order_status): every status the shop's orders take.
STATUSES = ("pending", "processed", "delivered", "cancelled", "return requested", "exchange requested")

SCHEMA = """
CREATE TABLE IF NOT EXISTS doc (kind TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (kind, id));
CREATE TABLE IF NOT EXISTS write_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, tool TEXT NOT NULL,
    args TEXT NOT NULL, at TEXT NOT NULL);
"""


def default_db_path() -> str:
    """The database file: `$RETAIL_DB`, else `skillc-retail.sqlite` in the temp folder."""
    return os.environ.get("RETAIL_DB") or os.path.join(tempfile.gettempdir(), "skillc-retail.sqlite")


def open_db(path: str) -> sqlite3.Connection:
    """Open (and on first use create and seed) the shop's database."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(SCHEMA)
    if db.execute("SELECT COUNT(*) FROM doc").fetchone()[0] == 0:
        seed = json.loads(SEED.read_text(encoding="utf-8"))
        db.execute("BEGIN")
        for kind in ("users", "orders", "products"):
            db.executemany("INSERT INTO doc VALUES (?, ?, ?)",
                           [(kind, key, json.dumps(body)) for key, body in seed[kind].items()])
        db.execute("COMMIT")
    return db


def fail(code: str, message: str) -> dict[str, Any]:
    """A refused request, worded the way the shop's back end words it."""
    return {"error": code, "message": f"Error: {message}"}


def money(value: Decimal) -> float:
    """A Decimal amount as the JSON number the shop stores (two decimals)."""
    return float(value.quantize(Decimal("0.01")))


class Shop:
    """The shop's records over one SQLite connection; each write is one transaction."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        """One record by kind (`users`, `orders`, `products`) and id, or None."""
        row = self.db.execute("SELECT body FROM doc WHERE kind = ? AND id = ?", (kind, key)).fetchone()
        return None if row is None else json.loads(row[0])

    def all(self, kind: str) -> list[dict[str, Any]]:
        """Every record of a kind, in id order."""
        return [json.loads(r[0]) for r in self.db.execute("SELECT body FROM doc WHERE kind = ? ORDER BY id", (kind,))]

    def save(self, tool: str, args: dict[str, Any], *records: tuple[str, dict[str, Any]]) -> None:
        """Store the changed records and log the write, all or nothing."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for kind, body in records:
                key = body["order_id"] if kind == "orders" else body["user_id"]
                self.db.execute("UPDATE doc SET body = ? WHERE kind = ? AND id = ?", (json.dumps(body), kind, key))
            self.db.execute("INSERT INTO write_log (tool, args, at) VALUES (?, ?, ?)",
                            (tool, json.dumps(args, sort_keys=True), datetime.now(timezone.utc).isoformat()))
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")


def _missing_items(order: dict[str, Any], item_ids: list[str]) -> list[str]:
    """Item ids asked for more often than the order holds them (an order may hold one twice)."""
    held = Counter(item["item_id"] for item in order["items"])
    asked = Counter(item_ids)
    return sorted(i for i, n in asked.items() if n > held[i])


def _order_item(order: dict[str, Any], item_id: str) -> dict[str, Any]:
    return next(item for item in order["items"] if item["item_id"] == item_id)


def build_server(db_path: str | None = None) -> MCPServer:
    """The shop's MCP server over the SQLite file at `db_path` (default `default_db_path()`)."""
    shop = Shop(open_db(db_path or default_db_path()))
    server = MCPServer("skillc-demo-retail", instructions="Demo shop: customers, orders, products, returns.")

    def order_in(status: str, order_id: str, action: str) -> dict[str, Any]:
        """The order when it is in `status`, else the shop's refusal (not found, or the wrong state)."""
        order = shop.get("orders", order_id)
        if order is None:
            return fail("not_found", f"order {order_id} not found")
        if order["status"] != status:
            return fail("invalid_state", f"order {order_id} is {order['status']}; only a {status} order can be {action}")
        return order

    @server.tool(title="Find a customer by email")
    async def find_user_id_by_email(email: str) -> dict[str, Any]:
        """Find the customer's user id by email address (case-insensitive)."""
        for user in shop.all("users"):
            if user["email"].lower() == email.strip().lower():
                return {"user_id": user["user_id"]}
        return fail("not_found", "user not found")

    @server.tool(title="Find a customer by name and zip code")
    async def find_user_id_by_name_zip(first_name: str, last_name: str, zip: str) -> dict[str, Any]:
        """Find the customer's user id by first name, last name and the zip code of their address;
        use it only when the customer cannot give their email."""
        for user in shop.all("users"):
            name = user["name"]
            if (name["first_name"].lower(), name["last_name"].lower(), user["address"]["zip"]) == (
                    first_name.strip().lower(), last_name.strip().lower(), zip.strip()):
                return {"user_id": user["user_id"]}
        return fail("not_found", "user not found")

    @server.tool(title="Get a customer's profile")
    async def get_user_details(user_id: str) -> dict[str, Any]:
        """The customer's profile: name, email, address, payment methods (a map keyed by payment
        method id: credit cards, gift cards with their balance, PayPal) and order ids."""
        user = shop.get("users", user_id)
        return fail("not_found", "user not found") if user is None else user

    @server.tool(title="Get an order")
    async def get_order_details(order_id: str) -> dict[str, Any]:
        """An order: status (pending, processed, delivered, cancelled, return requested, exchange
        requested), items with item id, product id, price and options, payments. Ids look like '#R4830012'."""
        order = shop.get("orders", order_id)
        return fail("not_found", "order not found") if order is None else order

    @server.tool(title="Get a product")
    async def get_product_details(product_id: str) -> dict[str, Any]:
        """A product and its variants (a map keyed by item id: options, availability, price). A
        product id is not an item id."""
        product = shop.get("products", product_id)
        return fail("not_found", "product not found") if product is None else product

    @server.tool(title="Check an order's status")
    async def check_order_status(order_id: str, status: str) -> dict[str, Any]:
        """Whether an order is in the given status now: `{order_id, status, matches}` (a helper to
        confirm that an earlier change took effect)."""
        if status not in STATUSES:
            return fail("invalid_argument", f"unknown status {status!r}")
        order = shop.get("orders", order_id)
        if order is None:
            return fail("not_found", "order not found")
        return {"order_id": order_id, "status": order["status"], "matches": order["status"] == status}

    @server.tool(title="Cancel a pending order")
    async def cancel_pending_order(order_id: str, reason: str) -> dict[str, Any]:
        """Cancel a pending order; the reason is 'no longer needed' or 'ordered by mistake'. A
        gift card payment is refunded to the card at once, others within 5 to 7 business days.
        Answers the order after the change."""
        order = order_in("pending", order_id, "cancelled")
        if "error" in order:
            return order
        if reason not in CANCEL_REASONS:
            return fail("invalid_argument", "invalid reason")
        user = shop.get("users", order["user_id"])
        assert user is not None
        refunds = []
        for payment in [p for p in order["payment_history"] if p["transaction_type"] == "payment"]:
            refunds.append({"transaction_type": "refund", "amount": payment["amount"],
                            "payment_method_id": payment["payment_method_id"]})
            method = user["payment_methods"].get(payment["payment_method_id"], {})
            if method.get("source") == "gift_card":  # gift cards are refunded immediately
                method["balance"] = money(Decimal(str(method["balance"])) + Decimal(str(payment["amount"])))
        order.update(status="cancelled", cancel_reason=reason)
        order["payment_history"].extend(refunds)
        shop.save("cancel_pending_order", {"order_id": order_id, "reason": reason}, ("orders", order), ("users", user))
        return order

    @server.tool(title="Change a pending order's shipping address")
    async def modify_pending_order_address(order_id: str, address1: str, address2: str, city: str,
                                           state: str, country: str, zip: str) -> dict[str, Any]:
        """Change the shipping address of a pending order. Answers the order after the change."""
        order = order_in("pending", order_id, "modified")
        if "error" in order:
            return order
        address = {"address1": address1, "address2": address2, "city": city, "state": state,
                   "country": country, "zip": zip}
        if not all(str(address[k]).strip() for k in ("address1", "city", "state", "country", "zip")):
            return fail("invalid_argument", "address1, city, state, country and zip are required")
        order["address"] = address
        shop.save("modify_pending_order_address", {"order_id": order_id, **address}, ("orders", order))
        return order

    @server.tool(title="Return items of a delivered order")
    async def return_delivered_order_items(order_id: str, item_ids: list[str], payment_method_id: str) -> dict[str, Any]:
        """Return items of a delivered order; the refund goes to the order's original payment
        method or to one of the customer's gift cards. The order becomes 'return requested' and the
        customer gets an email with the return instructions."""
        order = order_in("delivered", order_id, "returned")
        if "error" in order:
            return order
        user = shop.get("users", order["user_id"])
        assert user is not None
        method = user["payment_methods"].get(payment_method_id)
        if method is None:
            return fail("not_found", "payment method not found")
        if method["source"] != "gift_card" and payment_method_id != order["payment_history"][0]["payment_method_id"]:
            return fail("invalid_argument", "the refund must go to the original payment method or a gift card")
        if not item_ids or _missing_items(order, item_ids):
            return fail("not_found", f"items not on the order: {_missing_items(order, item_ids) or 'none given'}")
        order.update(status="return requested", return_items=sorted(item_ids), return_payment_method_id=payment_method_id)
        shop.save("return_delivered_order_items", {"order_id": order_id, "item_ids": item_ids,
                                                   "payment_method_id": payment_method_id}, ("orders", order))
        return order

    @server.tool(title="Exchange items of a delivered order")
    async def exchange_delivered_order_items(order_id: str, item_ids: list[str], new_item_ids: list[str],
                                             payment_method_id: str) -> dict[str, Any]:
        """Exchange items of a delivered order for available variants of the same products (the
        new item at the same position replaces the old one); the payment method pays or receives
        the price difference. The order becomes 'exchange requested'; no new order is placed."""
        order = order_in("delivered", order_id, "exchanged")
        if "error" in order:
            return order
        if not item_ids or _missing_items(order, item_ids):
            return fail("not_found", f"items not on the order: {_missing_items(order, item_ids) or 'none given'}")
        if len(item_ids) != len(new_item_ids):
            return fail("invalid_argument", "the number of items to be exchanged should match")
        difference = Decimal(0)
        for old_id, new_id in zip(item_ids, new_item_ids):
            old = _order_item(order, old_id)
            product = shop.get("products", old["product_id"])
            assert product is not None
            variant = product["variants"].get(new_id)
            if variant is None or not variant["available"]:
                return fail("not_found", f"new item {new_id} not found or available")
            difference += Decimal(str(variant["price"])) - Decimal(str(old["price"]))
        user = shop.get("users", order["user_id"])
        assert user is not None
        method = user["payment_methods"].get(payment_method_id)
        if method is None:
            return fail("not_found", "payment method not found")
        if method["source"] == "gift_card" and Decimal(str(method["balance"])) < difference:
            return fail("insufficient_balance", "insufficient gift card balance to pay for the price difference")
        order.update(status="exchange requested", exchange_items=sorted(item_ids),
                     exchange_new_items=sorted(new_item_ids), exchange_payment_method_id=payment_method_id,
                     exchange_price_difference=money(difference))
        shop.save("exchange_delivered_order_items", {"order_id": order_id, "item_ids": item_ids,
                                                     "new_item_ids": new_item_ids,
                                                     "payment_method_id": payment_method_id}, ("orders", order))
        return order

    @server.tool(title="Transfer to a human agent")
    async def transfer_to_human_agents(summary: str) -> dict[str, Any]:
        """Hand the conversation to a human agent with a summary of the customer's issue; only when
        the customer asks for one or the request is outside what the tools can do."""
        if not summary.strip():
            return fail("invalid_argument", "a transfer needs a summary")
        shop.save("transfer_to_human_agents", {"summary": summary})
        ticket = shop.db.execute("SELECT MAX(seq) FROM write_log").fetchone()[0]
        return {"transferred": True, "ticket": f"HT-{ticket:05d}", "summary": summary}

    declare_outputs(server, OUTPUT_SCHEMAS)
    return server


def declare_outputs(server: MCPServer, schemas: dict[str, dict[str, Any]]) -> None:
    """List each tool with its declared outputSchema (examples/retail_shapes.py) instead of the
    open object the SDK derives from `-> dict[str, Any]`. The SDK has no argument for it: the
    schema it lists is the registered tool's (cached) `output_schema`, set here."""
    for tool in server._tool_manager.list_tools():  # noqa: SLF001 - no public way to declare it
        if tool.name in schemas:
            tool.__dict__["output_schema"] = schemas[tool.name]


def main(argv: list[str] | None = None) -> None:
    """Serve over stdio, or over streamable HTTP on 127.0.0.1 with `--http PORT`."""
    serve_main(build_server, module="retail_server", env="RETAIL_DB", description=__doc__, argv=argv)


if __name__ == "__main__":
    main()
