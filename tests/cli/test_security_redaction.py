"""Finding 6: a URL's user and password never leave the process. `[studio] source =
"http://user:pw@host"` was shown whole by the unauthenticated /readyz, in every studio-stale event
and in the trace; one function (runtime/outside/redact.py) now masks them wherever a URL is printed."""
from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillc.runtime.outside.redact import redact_urls

from helpers.asgi_app import ALICE, serving

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "studio"
SOURCE = "http://studio-user:s3cr3t-pw@studio.internal:8780"


def test_redact_urls_masks_user_information_only() -> None:
    assert redact_urls(SOURCE) == "http://***@studio.internal:8780"
    assert redact_urls("postgresql://app:pw@db/skillc and https://x:y@h/p?q=a@b") == \
        "postgresql://***@db/skillc and https://***@h/p?q=a@b"
    assert redact_urls("http://studio.internal:8780/studio") == "http://studio.internal:8780/studio"
    assert redact_urls("mail me at a@b.c") == "mail me at a@b.c"


def _studio_then_down(app: Any) -> None:
    """The studio service answers from examples/studio in process until `down` is set."""
    from skillc.commands.studio import make_app

    studio = httpx.ASGITransport(app=make_app(EXAMPLE))
    state = {"down": False}

    async def handler(request: httpx.Request) -> httpx.Response:
        if state["down"]:
            raise httpx.ConnectError(f"cannot connect to {request.url}", request=request)
        return await studio.handle_async_request(request)

    app.state.ctx.feed._client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    app.state.studio_switch = state


def test_readyz_stale_events_and_the_trace_never_show_the_password(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)

    async def scenario() -> None:
        async with serving(tmp_path, tmp_path / "unused", source=SOURCE, before=_studio_then_down) as app:
            app.app.state.studio_switch["down"] = True
            app.ctx.feed._checked = 0.0  # the next turn asks the studio again
            ready = await app.call("GET", "/readyz")
            body = json.dumps({"threadId": "red", "runId": "red-1",
                               "messages": [{"id": "m1", "role": "user", "content": "hi"}]}).encode()
            run = await app.post(ALICE, "/agui", body)
            assert run.status == 200 and b"skillc.studio_stale" in run.body, run.body[:400]
            trace = await app.call("GET", "/api/sessions/red/trace",
                                   headers=app.signed(ALICE, "GET", "/api/sessions/red/trace"))
            assert b"studio.stale" in trace.body
            down = await app.call("GET", "/readyz")
            for answer in (ready, run, trace, down):
                assert b"s3cr3t-pw" not in answer.body and b"studio-user" not in answer.body, answer.body[:400]
            assert b"***@studio.internal:8780" in down.body
            files = [p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.jsonl")]
            assert files and not any("s3cr3t-pw" in text for text in files)
    asyncio.run(scenario())
    assert not any("s3cr3t-pw" in r.getMessage() for r in caplog.records)
