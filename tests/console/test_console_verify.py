"""A write whose answer is lost (the CMS never answers within the runtime's tool timeout) and that has no
verify tool: the console shows a VERIFY card, the user says it took effect, the card says who and
when, and the trace timeline shows the write settled by the user."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from helpers.console_live import ALICE, ROOT, LiveServer, start_live

pw = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")
expect = pw.expect


@pytest.fixture(scope="module")
def live(fake_model: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """This module's server: the server tests' CMS double, whose cms_article_create never answers
    for a title containing "hang"; the tool timeout is 1 s."""
    double = ROOT / "tests" / "server" / "cms_double.py"
    if not double.exists():
        pytest.skip(f"{double} (the server tests' CMS double) is not in this checkout")
    server = start_live(tmp_path_factory.mktemp("console-verify"), fake_model, cms_args=[str(double)], mcp_timeout=1.0)
    try:
        yield server
    finally:
        server.stop()


def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """One canned model step: a single tool call."""
    return {"tool_calls": [{"name": name, "arguments": json.dumps(args)}]}


def test_a_lost_write_answer_is_settled_by_the_user_on_a_verify_card(page_as: Any, fake_model: Any) -> None:
    page = page_as(ALICE)
    page.goto("/console/#/chat")
    fake_model.add(
        {"answer": {"agent": "editor"}},
        call("cms_space_list", {}),
        call("cms_article_create", {"title": "hang news", "spaceId": 3}),
        call("builtin_node_approval", {"summary": "Create the article hang news", "toolName": "cms_article_create"}),
    )
    page.fill("#chat-input", "Please create an article titled hang news")
    page.click("#chat-send")
    approval = page.locator(".card.open[data-kind=APPROVAL]")
    expect(approval).to_be_visible()
    assert fake_model.remaining == 0

    approval.locator("[data-action=approve]").click()  # the call times out: its outcome is unknown
    verify = page.locator(".card.open[data-kind=VERIFY]")
    expect(verify).to_be_visible()
    expect(verify.locator(".card-tool")).to_have_text("cms_article_create")
    expect(verify.locator(".summary")).to_contain_text("Did it take effect?")
    expect(verify.locator(".meta")).to_contain_text(re.compile(r"evidence e\d+"))

    fake_model.add(call("builtin_node_finish", {"output": "Created the article hang news."}))
    verify.locator("[data-action=verified]").click()
    expect(page.locator(".card[data-kind=VERIFY] .decided")).to_contain_text(
        re.compile(r"Confirmed it took effect by alice at \d{4}-"))
    expect(page.locator(".msg.agent").last).to_contain_text("Created the article hang news.")
    assert fake_model.remaining == 0

    page.click("#open-trace")
    write = page.locator("li.call[data-verdict=unknown]", has_text="cms_article_create")
    expect(write.locator(".settle")).to_have_text("settled by the user: SUCCESS")

    page.go_back()
    page.reload()  # drawn again from the trace: the card stays decided, with the audit's who and when
    expect(page.locator(".card[data-kind=VERIFY] .decided")).to_contain_text(re.compile(r"Confirmed it took effect by user 7 at "))
    assert page.js_errors == []
