"""Browser-test harness for the web console: the real `skillc serve` app on a loopback port
(uvicorn in a thread of this process), the fake OpenAI-compatible model server (its queue is
filled by each test, step by step), the example CMS MCP server as a real stdio process, and
Debian's chromium driven by Playwright. Skips with the reason when chromium or Playwright is
absent (CI installs Debian's package; browser builds are never downloaded)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from helpers.chromium import chromium
from helpers.console_live import ALICE, LiveServer, identity_header, start_live
from skillc.model_stub import FakeOpenAIServer


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeOpenAIServer]:
    """The model: an empty queue each test fills before the step that consumes it."""
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _empty_model_queue(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that failed half-way leaves canned responses behind: use them up, so the next test
    of the module starts from an empty script instead of failing for the first one's reason."""
    yield
    if "fake_model" not in request.fixturenames:
        return
    fake = request.getfixturevalue("fake_model")
    import httpx

    while fake.remaining:
        httpx.post(f"{fake.url}/chat/completions", json={"model": "drain", "messages": []}, timeout=10)


@pytest.fixture(scope="module")
def live(fake_model: FakeOpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The server the module's tests share (a module may override this fixture)."""
    server = start_live(tmp_path_factory.mktemp("console"), fake_model)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian chromium (never a downloaded build). Per module, not per session: while
    Playwright's sync API is active its event loop counts as running in this thread, and later
    tests of the suite that call asyncio.run() would fail."""
    try:
        from playwright.sync_api import expect
    except ImportError:
        pytest.skip("the playwright Python package is not installed (pip install -e '.[dev]')")
    # generous: a run may wait on the MCP server's first start, and the machine is shared
    expect.set_options(timeout=45_000)
    yield from chromium()


@pytest.fixture
def page_as(browser: Any, live: LiveServer) -> Iterator[Any]:
    """`page_as(platform)`: a fresh browser context acting as that caller (dev-mode identity)."""
    contexts = []

    def make(platform: dict[str, Any] = ALICE) -> Any:
        ctx = browser.new_context(base_url=live.url, viewport={"width": 1280, "height": 860},
                                  extra_http_headers=identity_header(platform))
        ctx.set_default_timeout(45_000)
        contexts.append(ctx)
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        # anything the Content-Security-Policy blocked (an inline style, another host) is an error
        page.on("console", lambda msg: errors.append(msg.text) if "Content Security Policy" in msg.text else None)
        page.js_errors = errors  # checked by the tests: a console with a script error fails
        return page

    yield make
    for ctx in contexts:
        ctx.close()
