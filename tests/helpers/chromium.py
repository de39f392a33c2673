"""Headless Debian chromium for tests that open a page that needs no server (the replay report):
skips with the reason when chromium or Playwright is absent, never downloads a browser."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from helpers.console_live import CHROMIUM, CHROMIUM_ARGS


def chromium() -> Iterator[Any]:
    """Yield a launched browser (a fixture body: `yield from chromium()`). Start it only after
    any asyncio.run the test needs: while Playwright's sync API runs, this thread counts as
    inside an event loop."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (Debian package `chromium`)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright Python package is not installed (pip install -e '.[dev]')")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
