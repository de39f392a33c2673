"""The console's approval card draws each list of the write as a table, one row per item, from the
AG-UI interrupt's `metadata.tables` (tests/runtime/test_approval_items.py checks the interrupt carries
them): a reviewer reads whose date of birth is whose. Real Chromium, the console's own module."""
from __future__ import annotations

from typing import Any

import pytest

pw = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")
expect = pw.expect

INTERRUPT = {
    "id": "t1.n1.APPROVAL", "message": "Book for Ava and Noah\npassengers:\n  1. First name: Ava …",
    "metadata": {"kind": "APPROVAL", "task": "t1", "node": "n1", "tool": "air_book", "digest": "hmac-sha256:x",
                 "tables": [{"list": "passengers", "columns": ["First name", "Date of birth"],
                             "rows": [["Ava", "1990-01-02"], ["<b>Noah</b>", "1985-05-05"]]}]},
}


def test_an_approval_card_shows_each_passenger_as_a_row(page_as: Any) -> None:
    page = page_as()
    page.goto("/console/#/chat")
    expect(page.locator("#new-session")).to_be_visible()
    page.evaluate("""async (interrupt) => {
        const { drawCard } = await import("/console/js/cards.js");
        const card = drawCard(interrupt, { decide: () => {} }, null, {});
        card.id = "under-test";
        document.body.append(card);
    }""", INTERRUPT)
    table = page.locator("#under-test table.items[data-list=passengers]")
    expect(table.locator("caption")).to_have_text("passengers")
    expect(table.locator("thead th")).to_have_text(["#", "First name", "Date of birth"])
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator("td")).to_have_text(["1", "Ava", "1990-01-02"])
    expect(rows.nth(1).locator("td")).to_have_text(["2", "<b>Noah</b>", "1985-05-05"])  # text, never markup
    assert page.js_errors == []
