"""`skillc serve`'s ASGI app in this process, for tests that speak HTTP to it without a socket: the
compiled example studio, SQLite on disk, a gateway answering every example tool with `{"code": 0}`
and a model double (scripted, or one that never plans). `call` sends one raw ASGI request and
counts the body bytes the app pulled, so a test can tell what was read before an answer."""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from skillc.runtime.mcp.result import CallOutcome, ToolInfo
from skillc.runtime.model.base import ModelError, ModelRequest, ModelResponse
from skillc.runtime.model.double import ModelDouble
from skillc.runtime.server.auth import sign_request

SECRET = "asgi-test-secret"
ALICE = {"userId": 7, "memberId": 70, "name": "alice", "organId": 9, "organName": "Acme"}
BOB = {"userId": 8, "name": "bob", "organId": 9}


class AnswerAll:
    """A started gateway serving the example studio's tools: each answers `{"code": 0}`."""

    def __init__(self, tools: list[str]) -> None:
        self.catalog = {t: ToolInfo(t, None, None, {"type": "object"}, "fake") for t in tools}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.on_invoked = None

    async def call(self, tool: str, args: dict[str, Any], *, timeout: float | None = None, **_: Any) -> CallOutcome:
        self.calls.append((tool, args))
        return CallOutcome({"code": 0, "data": {}}, None, "")

    async def aclose(self) -> None:
        """Nothing to close."""


def broken(record: logging.LogRecord) -> bool:
    """A log record that shows the service broke: a traceback, or an internal error (a failed
    model call logged as an error is the service reporting, not breaking)."""
    text = record.getMessage()
    return record.exc_info is not None or "internal error" in text.lower() or "Traceback" in text


def never_plans(request: ModelRequest) -> ModelResponse:
    """A model that is down: every turn ends at once with the model's error (no tool is reached)."""
    raise ModelError("the test model does not answer")


def write_config(tmp: Path, extra: str = "") -> Path:
    """skillc.toml: the store and traces under `tmp`, the gateway secret, `extra` lines of [server]."""
    path = tmp / "skillc.toml"
    path.write_text(f"""
[store]
path = {str(tmp / "store.sqlite")!r}
[server]
secret = {SECRET!r}
studio_refresh = "0s"
{extra}
""", encoding="utf-8")
    return path


@dataclass
class Answer:
    """One response: status, headers (lower-case names), body bytes; `pulled`: request body bytes read."""

    status: int
    headers: dict[str, str]
    body: bytes
    pulled: int

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.body)


@dataclass
class InProcess:
    """The app with its lifespan entered; `call` one request at a time (or concurrently)."""

    app: Any
    gateway: AnswerAll
    model: ModelDouble
    secret: str | None = SECRET
    log: list[str] = field(default_factory=list)

    @property
    def ctx(self) -> Any:
        """The app's ServerContext."""
        return self.app.state.ctx

    def signed(self, platform: dict[str, Any], method: str, target: str, body: bytes = b"") -> dict[str, str]:
        """The gateway's headers for a request."""
        assert self.secret is not None
        return sign_request(self.secret, method, target, body, platform)

    async def post(self, platform: dict[str, Any], target: str, body: bytes) -> Answer:
        """A JSON POST signed for `platform`."""
        return await self.call("POST", target, body=body,
                               headers={**self.signed(platform, "POST", target, body), "Content-Type": "application/json"})

    async def call(self, method: str, target: str, *, headers: dict[str, str] | list[tuple[bytes, bytes]] | None = None,
                   body: bytes | list[bytes] = b"", host: str = "127.0.0.1:8765") -> Answer:
        """One request through the ASGI interface. `body` as bytes goes with its Content-Length,
        as a list in those chunks without one; `headers` as (bytes, bytes) pairs go out exactly
        as given (no Host, no Content-Length added)."""
        path, _, query = target.partition("?")
        if isinstance(headers, list):
            raw_headers = headers
        else:
            raw_headers = [(b"host", host.encode())] + [(k.lower().encode("latin-1"), v.encode("latin-1"))
                                                       for k, v in (headers or {}).items()]
        if isinstance(body, bytes) and body and not isinstance(headers, list) \
                and "content-length" not in {k.lower() for k in (headers or {})}:
            raw_headers.append((b"content-length", str(len(body)).encode()))  # as an HTTP client sends it
        chunks = list(body) if isinstance(body, list) else [body]
        pulled = 0
        sent = 0

        async def receive() -> dict[str, Any]:
            nonlocal pulled, sent
            if sent < len(chunks):
                chunk = chunks[sent]
                sent += 1
                pulled += len(chunk)
                return {"type": "http.request", "body": chunk, "more_body": sent < len(chunks)}
            await finished.wait()  # the client stays until the whole answer is read (a stream too)
            return {"type": "http.disconnect"}

        status = 0
        out_headers: dict[str, str] = {}
        parts: list[bytes] = []

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                out_headers.update({k.decode("latin-1").lower(): v.decode("latin-1") for k, v in message.get("headers", [])})
            elif message["type"] == "http.response.body":
                parts.append(message.get("body", b""))

        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
                 "scheme": "http", "path": unquote(path), "raw_path": path.encode("utf-8", "surrogateescape"),
                 "query_string": query.encode("utf-8", "surrogateescape"), "headers": raw_headers,
                 "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8765), "root_path": ""}
        finished = asyncio.Event()
        try:
            await self.app(scope, receive, send)
        finally:
            finished.set()
        return Answer(status, out_headers, b"".join(parts), pulled)


@contextlib.asynccontextmanager
async def serving(tmp: Path, compiled: Path, *, extra: str = "", dev: bool = False, responder: Any = never_plans,
                  secret: str | None = SECRET, source: str | None = None, before: Any = None) -> AsyncIterator[InProcess]:
    """`create_app` of the compiled studio at `compiled` (or of `source`), its lifespan running
    meanwhile; `before(app)` runs before the lifespan starts."""
    from skillc.compile_on_load import compile_on_load
    from skillc.runtime.compiled.loader import load_compiled
    from skillc.runtime.server import create_app

    tools = sorted({t for m in load_compiled(compiled).skills.values() for t in m.SKILL.tool_names}) \
        if (compiled / "manifest.json").is_file() else []
    gateway = AnswerAll(tools)
    model = ModelDouble(responder)
    app = create_app(source or compiled, config_path=write_config(tmp, extra), model=model, gateway=gateway,
                     dev=dev or None, secret=None if dev else secret, compiler=compile_on_load)
    if before is not None:
        before(app)
    async with app.router.lifespan_context(app):
        yield InProcess(app, gateway, model, None if dev else secret)
