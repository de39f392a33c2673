"""The HTML report in the real headless Chromium the console tests use: it renders with no
request beyond its own file, no script error, and nothing from the recording executing; each
conversation opens and closes; the chart is drawn (the README's screenshot: test_readme_replay.py)."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.chromium import chromium
from helpers.transcripts import FOUND, LABELS, LOGS, WHO, answer, call, user

from skillc.main import run as skillc

ROOT = Path(__file__).resolve().parents[2]
EVIL = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


@pytest.fixture(scope="module")
def browser(report: Path) -> Iterator[Any]:
    """Chromium, started after the report is written (see helpers.chromium)."""
    yield from chromium()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("replay-html")
    evil = tmp / "evil.jsonl"
    evil.write_text(json.dumps({"id": EVIL, "messages": [user(EVIL), call("a", "inv_invoice_find", {"invoiceNo": EVIL}),
                                                         answer("a", FOUND)]}) + "\n")
    out = tmp / "report.html"
    assert skillc(["replay", LOGS, str(evil), "--studio", str(ROOT / "examples" / "studio"), "--agent", "billing",
                   *WHO, "--labels", LABELS, "--format", "html", "-o", str(out)]) == 0
    return out


def test_the_report_renders_alone_and_runs_nothing_it_quotes(browser: Any, report: Path) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 1400})
    page = ctx.new_page()
    requests: list[str] = []
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        assert requests == [report.as_uri()], requests  # nothing fetched but the file itself
        assert errors == [] and dialogs == []
        assert page.title() == "skillc replay report"
        assert page.locator("details").count() == 6
        assert page.locator("svg.chart rect").count() >= 8
        # the recording's text is shown as text
        evil = page.locator("details", has_text="onerror")
        assert EVIL in evil.locator("summary").inner_text()
        # a conversation with nothing stopped starts closed and opens on a click
        quiet = page.locator("details", has_text="ticket-103")
        assert quiet.get_attribute("open") is None
        assert not quiet.locator("table").is_visible()
        quiet.locator("summary").click()
        assert quiet.get_attribute("open") == "" and quiet.locator("table").is_visible()
        assert quiet.locator("tr", has_text="inv_order_list").locator(".badge").inner_text() == "allowed"
        quiet.locator("summary").click()
        stopped = page.locator("details", has_text="ticket-102")
        assert stopped.get_attribute("open") == ""
        assert "PARAM_PROVENANCE_REJECTED" in stopped.inner_text()
    finally:
        ctx.close()
