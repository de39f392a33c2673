"""The console as a newcomer meets it, in real headless Chromium: development mode plays the
example data as it is and the identity can be changed from the page; a write the system refused
(a 409) says what "settled SUCCESS" means and shows the system's own message in its timeline row;
dates read the same on the approval card and in the trace; nothing scrolls sideways on a phone."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from helpers.console_live import ALICE, LiveServer

pw = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")
expect = pw.expect

ROUTE_EDITOR = {"answer": {"agent": "editor"}}
LOCAL_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")  # util.js `when`: the console's one date format


def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """One canned model step: a single tool call."""
    return {"tool_calls": [{"name": name, "arguments": json.dumps(args)}]}


def approval_steps(title: str) -> list[dict[str, Any]]:
    """Route, look up the spaces, try the write (stopped by the gate), ask for approval."""
    return [ROUTE_EDITOR, call("cms_space_list", {}), call("cms_article_create", {"title": title, "spaceId": 3}),
            call("builtin_node_approval", {"summary": "Create the article", "toolName": "cms_article_create"})]


@pytest.fixture
def bare_page(browser: Any, live: LiveServer) -> Iterator[Any]:
    """`bare_page(width)`: a page that sends no identity header (the server's dev identity applies)."""
    contexts = []

    def make(width: int = 1280) -> Any:
        ctx = browser.new_context(base_url=live.url, viewport={"width": width, "height": 800})
        ctx.set_default_timeout(45_000)
        contexts.append(ctx)
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.js_errors = errors
        return page

    yield make
    for ctx in contexts:
        ctx.close()


def _send(page: Any, text: str) -> Any:
    page.goto("/console/#/chat")
    page.click("#new-session")
    expect(page.locator("#session-id")).to_be_visible()
    page.fill("#chat-input", text)
    page.click("#chat-send")
    card = page.locator(".card.open[data-kind=APPROVAL]")
    expect(card).to_be_visible()
    return card


def test_dev_mode_plays_the_example_and_the_identity_is_set_from_the_page(bare_page: Any, fake_model: Any) -> None:
    page = bare_page()
    page.goto("/console/#/chat")
    expect(page.locator("#devmode")).to_be_visible()
    expect(page.locator("#devmode-who")).to_contain_text('"organId":9')  # the example data's organisation
    # the example plays as is: the lookup finds organisation 9's spaces, so space 3 is legal
    fake_model.add(*approval_steps("Dev spring"))
    card = _send(page, "Please create an article titled Dev spring")
    expect(card.locator(".summary")).to_contain_text("Space: 3")

    page.click("#dev-identity-edit")
    page.fill("#dev-identity-input", '{"organId": 9}')
    page.click("#dev-identity-apply")
    expect(page.locator("#dev-identity-error")).to_contain_text("needs a userId")  # nothing applied
    page.fill("#dev-identity-input", '{"userId": 8, "organId": 9, "name": "bob"}')
    page.click("#dev-identity-apply")  # reloads as bob
    expect(page.locator("#who")).to_have_text("bob")
    expect(page.locator("#devmode-who")).to_contain_text('"userId":8')
    page.reload()  # kept by this browser
    expect(page.locator("#who")).to_have_text("bob")
    page.click("#dev-identity-edit")
    page.click("#dev-identity-reset")
    expect(page.locator("#who")).to_have_text("dev")
    assert page.js_errors == []


def test_a_refused_write_says_what_settled_means_with_the_systems_message(page_as: Any, fake_model: Any) -> None:
    page = page_as(ALICE)
    fake_model.add(*approval_steps("Spring sale"))  # the example CMS already has it in space 3: 409
    card = _send(page, "Please create an article titled Spring sale")
    fake_model.add(call("builtin_node_fail", {"reason": "the title is taken"}))
    card.locator("[data-action=approve]").click()
    decided = page.locator(".card[data-kind=APPROVAL] .decided")
    expect(decided).to_contain_text(re.compile(r"Approved by alice at \d{4}-"))
    card_time = LOCAL_TIME.search(decided.inner_text())
    assert card_time, decided.inner_text()

    page.click("#open-trace")
    row = page.locator("li.call[data-verdict=business_failed]", has_text="cms_article_create")
    expect(row.locator(".said")).to_have_text("the system said: an article titled 'Spring sale' already exists in space 3")
    expect(row.locator(".settle")).to_have_class(re.compile(r"\bwarn\b"))  # not the green of a success
    expect(row.locator(".meaning")).to_contain_text("its effect is known")
    expect(row.locator(".meaning")).to_contain_text("the business verdict is failure")
    settled = page.locator("li.ev[data-type='write.settled']")
    expect(settled).to_contain_text("settled SUCCESS via call: its effect is known")

    # one date format: the trace's approval rows read like the card (no raw ISO text)
    audit = page.locator("li.ev[data-type='audit.approval']", has_text="CONFIRM")
    expect(audit).to_contain_text(f"at {card_time.group(0)}")
    resumed = page.locator("li.ev[data-type='node.resumed']")
    expect(resumed).to_contain_text(f"at {card_time.group(0)}")
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", page.locator("#view").inner_text())
    assert page.js_errors == []


@pytest.mark.parametrize("width", [360, 400])
def test_nothing_scrolls_sideways_on_a_narrow_screen(page_as: Any, fake_model: Any, width: int) -> None:
    page = page_as(ALICE)
    page.set_viewport_size({"width": width, "height": 760})
    fake_model.add(*approval_steps(f"Narrow {width}"))
    _send(page, f"Please create an article titled Narrow {width}")
    wide = []
    for view in ("chat", "trace", "studio"):
        if view == "trace":
            page.click("#open-trace")
            expect(page.locator("li.call").first).to_be_visible()
        elif view == "studio":
            page.goto("/console/#/studio/skill/cms.article.lifecycle")
            expect(page.locator("section.tool").first).to_be_visible()
        width_now = page.evaluate("document.documentElement.scrollWidth")
        if width_now > width:
            wide.append((view, width_now, page.evaluate(
                "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > "
                f"{width} + 1).slice(0, 5).map(e => e.tagName + '.' + e.className)")))
    assert wide == [], wide
    assert page.js_errors == []
