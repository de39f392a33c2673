"""The console in production mode: the server checks gateway signatures. Without a gateway the
page loads (its files hold no data) but says the caller is not signed in; behind a gateway (a
Playwright route that signs each API request the way a platform gateway does, docs/API.md
section 1) the console works unchanged, no development banner, and a decision carries the
identity the gateway vouched for."""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from helpers.console_live import ALICE, LiveServer, start_live

pw = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")
expect = pw.expect
SECRET = "console-test-secret"


@pytest.fixture(scope="module")
def live(fake_model: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """This module's server checks HMAC signatures made with SECRET."""
    server = start_live(tmp_path_factory.mktemp("console-signed"), fake_model, secret=SECRET)
    try:
        yield server
    finally:
        server.stop()


def behind_gateway(page: Any, platform: dict[str, Any]) -> None:
    """Sign every API and AG-UI request of `page` for `platform`, as the gateway would."""
    from skillc.runtime.server.auth import sign_request

    def sign(route: Any) -> None:
        request = route.request
        url = urlsplit(request.url)
        target = url.path + (f"?{url.query}" if url.query else "")
        body = request.post_data_buffer or b""
        headers = {k: v for k, v in request.headers.items() if not k.lower().startswith("x-skillc-")}
        headers.update(sign_request(SECRET, request.method, target, body, platform))
        route.continue_(headers=headers)

    page.route("**/api/**", sign)
    page.route("**/agui", sign)


def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """One canned model step: a single tool call."""
    return {"tool_calls": [{"name": name, "arguments": json.dumps(args)}]}


def test_without_a_gateway_the_console_says_it_is_not_signed_in(browser: Any, live: LiveServer) -> None:
    ctx = browser.new_context(base_url=live.url)
    try:
        page = ctx.new_page()
        page.goto("/console/#/chat")
        expect(page.locator("[role=alert]")).to_contain_text("Not signed in")
        expect(page.locator("#devmode")).to_be_hidden()
        # a forged identity header without a signature is no better
        forged = ctx.request.get("/api/sessions", headers={"X-Skillc-Identity": json.dumps(ALICE)})
        assert forged.status == 401 and forged.json()["error"]["code"] == "AUTH_MISSING"
    finally:
        ctx.close()


def test_behind_a_signing_gateway_a_write_is_approved_under_the_gateway_identity(
        browser: Any, live: LiveServer, fake_model: Any) -> None:
    ctx = browser.new_context(base_url=live.url, viewport={"width": 1280, "height": 860})
    try:
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        behind_gateway(page, ALICE)
        page.goto("/console/#/chat")
        expect(page.locator("#who")).to_contain_text("alice")
        expect(page.locator("#devmode")).to_be_hidden()
        fake_model.add(
            {"answer": {"agent": "editor"}},
            call("cms_space_list", {}),
            call("cms_article_create", {"title": "Gateway news", "spaceId": 3}),
            call("builtin_node_approval", {"summary": "Create Gateway news", "toolName": "cms_article_create"}),
        )
        page.fill("#chat-input", "Please create an article titled Gateway news")
        page.click("#chat-send")
        card = page.locator(".card.open[data-kind=APPROVAL]")
        expect(card.locator(".summary")).to_contain_text("Title: Gateway news")
        fake_model.add(call("builtin_node_finish", {"output": "Created Gateway news."}))
        card.locator("[data-action=approve]").click()
        expect(page.locator(".card[data-kind=APPROVAL] .decided")).to_contain_text("Approved by alice at ")
        expect(page.locator(".msg.agent").last).to_contain_text("Created Gateway news.")
        assert fake_model.remaining == 0
        assert errors == []
    finally:
        ctx.close()
