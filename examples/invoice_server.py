"""A demo invoicing system as a real MCP server: orders, invoice issue/get/find/void in SQLite.

Every tool answers `{"code": 0, "data": …, "msg": "ok"}`; a business failure is another code
(4001 bad input, 4004 not found, 4009 conflict; 2002 "already voided" on a void), never an MCP
error, so a contract's `success`/`error` decide what counts (spec §6). `inv_invoice_issue` takes
the nested `orderInfo.taxNo` and the per-line `lines[].goodsCode` the spec uses as its examples.
The database path comes from `INVOICE_DB` (default: a file in the system temp folder).

Run: `python -m skillc.examples.invoice_server` (stdio) or `… --http PORT` (streamable HTTP on
127.0.0.1).
"""
from __future__ import annotations

import json
import os
import re
import sqlite3
import tempfile
from typing import Any

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from skillc.examples.serving import serve_main

OK = 0
ALREADY_VOIDED = 2002
BAD_REQUEST = 4001
NOT_FOUND = 4004
CONFLICT = 4009

# A unified social credit code style tax number: 15 to 20 upper-case letters and digits.
TAX_NO = re.compile(r"^[0-9A-Z]{15,20}$")

SCHEMA = """
CREATE TABLE IF NOT EXISTS sales_order (order_no TEXT PRIMARY KEY, organ_id INTEGER NOT NULL,
    buyer_name TEXT NOT NULL, buyer_tax_no TEXT, status TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS order_item (order_no TEXT NOT NULL, code TEXT NOT NULL, name TEXT NOT NULL,
    qty INTEGER NOT NULL, price REAL NOT NULL, PRIMARY KEY (order_no, code));
CREATE TABLE IF NOT EXISTS invoice (seq INTEGER PRIMARY KEY AUTOINCREMENT, invoice_no TEXT UNIQUE,
    order_no TEXT NOT NULL, tax_no TEXT NOT NULL, buyer_name TEXT NOT NULL, invoice_type TEXT NOT NULL,
    amount REAL NOT NULL, status TEXT NOT NULL, lines TEXT NOT NULL, issuer_id INTEGER, organ_name TEXT,
    remark TEXT, void_reason TEXT, voided_by INTEGER, voided_dept TEXT);
"""

SEED = """
INSERT INTO sales_order VALUES
  ('SO-1001', 9, 'Globex Ltd', '91310000MA1K3YJ12X', 'OPEN'),
  ('SO-1002', 9, 'Initech GmbH', '91440300MA5FPX8H2Q', 'INVOICED'),
  ('SO-1003', 9, 'Umbrella Corp', '91110108MA01C0RK4T', 'CANCELLED'),
  ('SO-1004', 9, 'Hooli Inc', NULL, 'OPEN'),
  ('SO-2001', 12, 'Stark Industries', '91500000MA60Y1QF7N', 'OPEN');
INSERT INTO order_item VALUES
  ('SO-1001', 'GD-001', 'Consulting hours', 10, 150), ('SO-1001', 'GD-002', 'Travel', 1, 320),
  ('SO-1002', 'GD-003', 'Licence', 1, 2400),
  ('SO-1003', 'GD-001', 'Consulting hours', 4, 150),
  ('SO-1004', 'GD-004', 'Training day', 2, 900),
  ('SO-2001', 'GD-005', 'Hardware', 3, 1000);
INSERT INTO invoice (seq, invoice_no, order_no, tax_no, buyer_name, invoice_type, amount, status, lines,
                     issuer_id, organ_name) VALUES
  (5001, 'INV-5001', 'SO-1002', '91440300MA5FPX8H2Q', 'Initech GmbH', 'NORMAL', 2400, 'ISSUED',
   '[{"goodsCode": "GD-003", "qty": 1, "amount": 2400}]', 7, 'Acme');
"""


class OrderInfo(BaseModel):
    """Who the invoice is for and who issues it."""

    taxNo: str
    buyerName: str
    issuerId: int
    organName: str | None = None


class InvoiceLine(BaseModel):
    """One invoiced line: a goods code of the order, its quantity and amount."""

    goodsCode: str
    qty: int
    amount: float


def default_db_path() -> str:
    """The database file: `$INVOICE_DB`, else `skillc-invoice.sqlite` in the temp folder."""
    return os.environ.get("INVOICE_DB") or os.path.join(tempfile.gettempdir(), "skillc-invoice.sqlite")


def open_db(path: str) -> sqlite3.Connection:
    """Open (and on first use create and seed) the invoicing database."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None)
    db.row_factory = sqlite3.Row
    db.executescript(SCHEMA)
    if db.execute("SELECT COUNT(*) FROM sales_order").fetchone()[0] == 0:
        db.executescript("BEGIN;" + SEED + "COMMIT;")
    return db


def ok(data: Any, msg: str = "ok") -> dict[str, Any]:
    """A success envelope."""
    return {"code": OK, "data": data, "msg": msg}


def fail(code: int, msg: str, data: Any = None) -> dict[str, Any]:
    """A business-failure envelope."""
    return {"code": code, "data": data, "msg": msg}


def _invoice(row: sqlite3.Row) -> dict[str, Any]:
    return {"invoiceNo": row["invoice_no"], "orderNo": row["order_no"], "taxNo": row["tax_no"],
            "buyerName": row["buyer_name"], "invoiceType": row["invoice_type"], "amount": row["amount"],
            "status": row["status"], "lines": json.loads(row["lines"]), "remark": row["remark"]}


def build_server(db_path: str | None = None) -> MCPServer:
    """The invoicing MCP server over the SQLite file at `db_path` (default `default_db_path()`)."""
    db = open_db(db_path or default_db_path())
    server = MCPServer("skillc-demo-invoice", instructions="Demo invoicing: sales orders and invoices.")

    def items_of(order_no: str) -> list[dict[str, Any]]:
        rows = db.execute("SELECT * FROM order_item WHERE order_no = ? ORDER BY code", (order_no,))
        return [{"code": r["code"], "name": r["name"], "qty": r["qty"], "price": r["price"],
                 "amount": r["qty"] * r["price"]} for r in rows]

    @server.tool(title="List orders")
    async def inv_order_list(organId: int, status: str | None = None) -> dict[str, Any]:
        """List an organisation's sales orders, optionally by status (OPEN, INVOICED, CANCELLED)."""
        sql, args = "SELECT * FROM sales_order WHERE organ_id = ?", [organId]
        if status is not None:
            sql, args = sql + " AND status = ?", [*args, status]
        records = [{"orderNo": r["order_no"], "buyerName": r["buyer_name"], "status": r["status"],
                    "total": sum(i["amount"] for i in items_of(r["order_no"]))}
                   for r in db.execute(sql + " ORDER BY order_no", args)]
        return ok({"records": records, "total": len(records)})

    @server.tool(title="Get an order")
    async def inv_order_get(orderNo: str, organId: int) -> dict[str, Any]:
        """Get one order with buyer and items; 4004 (status NOT_FOUND) when the organisation has none."""
        row = db.execute("SELECT * FROM sales_order WHERE order_no = ? AND organ_id = ?",
                         (orderNo, organId)).fetchone()
        if row is None:
            # The status is always present so a contract can judge on it alone.
            return fail(NOT_FOUND, f"order {orderNo} not found", {"orderNo": orderNo, "status": "NOT_FOUND"})
        items = items_of(orderNo)
        return ok({"orderNo": orderNo, "status": row["status"], "buyerName": row["buyer_name"],
                   "buyer": {"name": row["buyer_name"], "taxNo": row["buyer_tax_no"]},
                   "items": items, "total": sum(i["amount"] for i in items)},
                  "ok" if row["status"] == "OPEN" else f"order {orderNo} is {row['status']}")

    @server.tool(title="Issue an invoice")
    async def inv_invoice_issue(orderNo: str, orderInfo: OrderInfo, lines: list[InvoiceLine],
                                invoiceType: str = "NORMAL", remark: str | None = None) -> dict[str, Any]:
        """Issue an invoice for an open order; 4004 unknown order, 4009 not open, 4001 bad tax number or line."""
        order = db.execute("SELECT * FROM sales_order WHERE order_no = ?", (orderNo,)).fetchone()
        if order is None:
            return fail(NOT_FOUND, f"order {orderNo} not found")
        if order["status"] != "OPEN":
            return fail(CONFLICT, f"order {orderNo} is {order['status']}, not OPEN")
        if not TAX_NO.match(orderInfo.taxNo):
            return fail(BAD_REQUEST, "orderInfo.taxNo is not a valid tax number")
        if invoiceType not in ("NORMAL", "SPECIAL"):
            return fail(BAD_REQUEST, f"unknown invoiceType {invoiceType!r}")
        known = {i["code"] for i in items_of(orderNo)}
        unknown = [line.goodsCode for line in lines if line.goodsCode not in known]
        if not lines or unknown:
            return fail(BAD_REQUEST, f"lines[].goodsCode not on order {orderNo}: {unknown or 'no lines'}")
        amount = sum(line.amount for line in lines)
        cur = db.execute(
            "INSERT INTO invoice (order_no, tax_no, buyer_name, invoice_type, amount, status, lines, issuer_id,"
            " organ_name, remark) VALUES (?, ?, ?, ?, ?, 'ISSUED', ?, ?, ?, ?)",
            (orderNo, orderInfo.taxNo, orderInfo.buyerName, invoiceType, amount,
             json.dumps([line.model_dump() for line in lines]), orderInfo.issuerId, orderInfo.organName, remark))
        invoice_no = f"INV-{cur.lastrowid}"
        db.execute("UPDATE invoice SET invoice_no = ? WHERE seq = ?", (invoice_no, cur.lastrowid))
        db.execute("UPDATE sales_order SET status = 'INVOICED' WHERE order_no = ?", (orderNo,))
        row = db.execute("SELECT * FROM invoice WHERE invoice_no = ?", (invoice_no,)).fetchone()
        return ok(_invoice(row), "issued")

    @server.tool(title="Get an invoice")
    async def inv_invoice_get(invoiceNo: str | None = None) -> dict[str, Any]:
        """Get one invoice; 4004 when it does not exist."""
        if invoiceNo is None:  # contracts ask for it (look it up / ask the user); the schema leaves it optional
            return fail(BAD_REQUEST, "invoiceNo is required")
        row = db.execute("SELECT * FROM invoice WHERE invoice_no = ?", (invoiceNo,)).fetchone()
        return fail(NOT_FOUND, f"invoice {invoiceNo} not found") if row is None else ok(_invoice(row))

    @server.tool(title="Find invoices")
    async def inv_invoice_find(orderNo: str | None = None, invoiceNo: str | None = None,
                               status: str | None = None) -> dict[str, Any]:
        """Find invoices by order, number and/or status (ISSUED, VOIDED): `data.records`, `data.total`."""
        sql, args = "SELECT * FROM invoice WHERE 1 = 1", []
        for column, value in (("order_no", orderNo), ("invoice_no", invoiceNo), ("status", status)):
            if value is not None:
                sql, args = sql + f" AND {column} = ?", [*args, value]
        records = [_invoice(r) for r in db.execute(sql + " ORDER BY seq", args)]
        return ok({"records": records, "total": len(records)})

    @server.tool(title="Void an invoice")
    async def inv_invoice_void(reason: str, operatorId: int,
                               deptPath: str | None = None, invoiceNo: str | None = None) -> dict[str, Any]:
        """Void an issued invoice and reopen its order; 2002 when already voided, 4004 unknown invoice."""
        if invoiceNo is None:  # contracts ask for it (look it up / ask the user); the schema leaves it optional
            return fail(BAD_REQUEST, "invoiceNo is required")
        row = db.execute("SELECT * FROM invoice WHERE invoice_no = ?", (invoiceNo,)).fetchone()
        if row is None:
            return fail(NOT_FOUND, f"invoice {invoiceNo} not found")
        if not reason.strip():
            return fail(BAD_REQUEST, "a void needs a reason")
        if row["status"] == "VOIDED":
            return fail(ALREADY_VOIDED, f"invoice {invoiceNo} was already voided", _invoice(row))
        db.execute("UPDATE invoice SET status = 'VOIDED', void_reason = ?, voided_by = ?, voided_dept = ?"
                   " WHERE invoice_no = ?", (reason, operatorId, deptPath, invoiceNo))
        db.execute("UPDATE sales_order SET status = 'OPEN' WHERE order_no = ?", (row["order_no"],))
        row = db.execute("SELECT * FROM invoice WHERE invoice_no = ?", (invoiceNo,)).fetchone()
        return ok(_invoice(row), "voided")

    return server


def main(argv: list[str] | None = None) -> None:
    """Serve over stdio, or over streamable HTTP on 127.0.0.1 with `--http PORT`."""
    serve_main(build_server, module="invoice_server", env="INVOICE_DB", description=__doc__, argv=argv)


if __name__ == "__main__":
    main()
