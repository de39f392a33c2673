"""What the demo shop's tools answer, as the MCP `outputSchema` each tool declares
(examples/retail_server.py): the records of `retail/seed.json` and the fields a write adds, each
answer also possibly the shop's refusal (`error`, `message`). No field is required (an answer is
the record or a refusal) and no other field ever appears, so `skillc check --servers` can say
which field a rule reads that the shop never answers (SC712), and a client checking the answers
against the schema finds every one in it.
"""
from __future__ import annotations

from typing import Any

STRING: dict[str, Any] = {"type": "string"}
NUMBER: dict[str, Any] = {"type": "number"}
STRINGS: dict[str, Any] = {"type": "array", "items": STRING}
REFUSAL = {"error": STRING, "message": STRING}  # fail(): a refused request


def shape(**properties: Any) -> dict[str, Any]:
    """An object with exactly these (optional) fields."""
    return {"type": "object", "properties": properties, "additionalProperties": False}


def answer(**properties: Any) -> dict[str, Any]:
    """A tool's answer: these fields, or the shop's refusal."""
    return shape(**properties, **REFUSAL)


ADDRESS = shape(address1=STRING, address2=STRING, city=STRING, state=STRING, country=STRING, zip=STRING)
PAYMENT_METHOD = shape(id=STRING, source=STRING, brand=STRING, last_four=STRING, balance=NUMBER)
OPTIONS = {"type": "object", "additionalProperties": STRING}  # an item's options, named by the product
USER = dict(user_id=STRING, name=shape(first_name=STRING, last_name=STRING), email=STRING, address=ADDRESS,
            payment_methods={"type": "object", "additionalProperties": PAYMENT_METHOD}, orders=STRINGS)
ITEM = shape(item_id=STRING, product_id=STRING, name=STRING, price=NUMBER, options=OPTIONS)
PAYMENT = shape(transaction_type=STRING, amount=NUMBER, payment_method_id=STRING)
ORDER = dict(order_id=STRING, user_id=STRING, status=STRING, placed_at=STRING, address=ADDRESS,
             items={"type": "array", "items": ITEM},
             fulfillments={"type": "array", "items": shape(tracking_id=STRINGS, item_ids=STRINGS)},
             payment_history={"type": "array", "items": PAYMENT}, cancel_reason=STRING,
             return_items=STRINGS, return_payment_method_id=STRING, exchange_items=STRINGS,
             exchange_new_items=STRINGS, exchange_payment_method_id=STRING, exchange_price_difference=NUMBER)
VARIANT = shape(item_id=STRING, options=OPTIONS, available={"type": "boolean"}, price=NUMBER)
PRODUCT = dict(product_id=STRING, name=STRING, variants={"type": "object", "additionalProperties": VARIANT})

OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "find_user_id_by_email": answer(user_id=STRING),
    "find_user_id_by_name_zip": answer(user_id=STRING),
    "get_user_details": answer(**USER),
    "get_order_details": answer(**ORDER),
    "get_product_details": answer(**PRODUCT),
    "check_order_status": answer(order_id=STRING, status=STRING, matches={"type": "boolean"}),
    "cancel_pending_order": answer(**ORDER),
    "modify_pending_order_address": answer(**ORDER),
    "return_delivered_order_items": answer(**ORDER),
    "exchange_delivered_order_items": answer(**ORDER),
    "transfer_to_human_agents": answer(transferred={"type": "boolean"}, ticket=STRING, summary=STRING),
}
