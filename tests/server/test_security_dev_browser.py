"""Finding 4 in a real Chromium: a web page on another site makes the developer's browser POST to a
`--dev-insecure` server (a `text/plain` fetch and a form, the requests a page may send anywhere
without asking). The server refuses both before any handler: no run starts, nothing reaches the
model. The same browser on the service's own origin still runs (the console's way)."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.console_live import CHROMIUM, CHROMIUM_ARGS, LiveServer

EVIL = "http://127.0.0.2:9"  # another origin (routed by the test, never contacted); loopback, so Chromium lets it reach the server
RUN = {"threadId": "x-site", "runId": "x-site-1", "messages": [{"id": "m1", "role": "user", "content": "delete it all"}]}


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from skillc.compiler.build import compile_studio
    from skillc.runtime.model.double import ModelDouble
    from skillc.runtime.server import create_app

    from helpers.asgi_app import AnswerAll, never_plans, write_config

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (Debian package `chromium`)")
    pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")
    tmp = tmp_path_factory.mktemp("devbrowser")
    compile_studio(Path(__file__).resolve().parents[2] / "examples" / "studio", tmp / "compiled")
    model = ModelDouble(never_plans)
    app = create_app(tmp / "compiled", config_path=write_config(tmp), model=model, gateway=AnswerAll([]), dev=True)
    server = LiveServer(app).start()
    server.model, server.ctx = model, app.state.ctx
    try:
        yield server
    finally:
        server.stop()


def test_another_site_cannot_run_as_the_dev_identity(dev_server: Any) -> None:
    from playwright.sync_api import sync_playwright

    attack = f"""<!doctype html><body><form id="f" method="POST" action="{dev_server.url}/agui"
        enctype="text/plain"><input name='{json.dumps(RUN)[:-1]}, "x": "' value='"}}'></form>
      <script>
        window.done = fetch("{dev_server.url}/agui", {{method: "POST", mode: "no-cors",
          headers: {{"Content-Type": "text/plain"}}, body: {json.dumps(json.dumps(RUN))}}})
          .then(() => "sent", (e) => "blocked: " + e);
      </script></body>"""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.route(f"{EVIL}/**", lambda route: route.fulfill(status=200, content_type="text/html", body=attack))
            seen: list[int] = []
            page.on("response", lambda r: seen.append(r.status) if r.url.startswith(dev_server.url) else None)
            page.goto(f"{EVIL}/")
            # this Chromium may itself refuse a fetch into the loopback address space from another
            # origin (Local Network Access); a form post is a navigation, which it sends
            page.evaluate("window.done")
            with page.expect_response(lambda r: r.url.startswith(dev_server.url)):
                page.evaluate("document.getElementById('f').submit()")
            assert seen and all(status in (403, 415) for status in seen), seen
            assert dev_server.model.requests == [] and dev_server.ctx.runs.get("x-site-1") is None

            own = browser.new_page()
            own.goto(f"{dev_server.url}/console/")
            status = own.evaluate("""async () => (await fetch("/agui", {method: "POST",
                headers: {"Content-Type": "application/json", "Accept": "text/event-stream"},
                body: JSON.stringify({threadId: "own", runId: "own-1",
                                      messages: [{id: "m1", role: "user", content: "hi"}]})})).status""")
            assert status == 200 and dev_server.ctx.runs.get("own-1") is not None
        finally:
            browser.close()
