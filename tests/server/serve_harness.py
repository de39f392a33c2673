"""Loopback harness for the server tests: uvicorn in a thread, a signing AG-UI client, stream checks."""
from __future__ import annotations

import json
import socket
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from ag_ui_validate.pytest_plugin import assert_valid_agui

from skillc.runtime.server.auth import sign_request

ALICE = {"userId": 7, "memberId": 70, "name": "alice", "organId": 9, "organName": "Acme"}
BOB = {"userId": 8, "name": "bob", "organId": 9}
ROOT = Path(__file__).resolve().parents[2]
SECRET = "test-gateway-secret"
DOUBLE = Path(__file__).with_name("cms_double.py")


def write_config(tmp: Path, source: str, model_url: str) -> Path:
    """A skillc.toml for one served runtime."""
    (tmp / "gate").mkdir(exist_ok=True)
    text = f"""
[studio]
source = {str(source)!r}
[store]
path = {str(tmp / "store.sqlite")!r}
[model]
base_url = {model_url!r}
model = "fake"
max_retries = 0
[mcp]
timeout = 2
connect_timeout = 60
[mcp.servers.cms]
command = {sys.executable!r}
args = [{str(DOUBLE)!r}]
env = {{ GATE_DIR = {str(tmp / "gate")!r} }}
[server]
secret = {SECRET!r}
studio_refresh = "0s"
"""
    path = tmp / "skillc.toml"
    path.write_text(text, encoding="utf-8")
    return path


class _Server(uvicorn.Server):
    """uvicorn that says when it listens (no polling)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()


class ServerThread:
    """An ASGI app served by uvicorn on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = _Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        if not self.server.ready.wait(120) or not self.server.started:
            raise RuntimeError("the server did not start")
        return self

    def stop(self) -> None:
        """Graceful stop (lifespan shutdown runs), then wait for the thread."""
        self.server.should_exit = True
        self.thread.join(60)

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Stream:
    """One AG-UI response: status, the events (parsed, and as the bytes sent), the frame ids, an error body."""

    status: int
    events: list[dict[str, Any]] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    ids: list[int] = field(default_factory=list)
    error: dict[str, Any] | None = None

    def of(self, type_: str, name: str | None = None) -> list[dict[str, Any]]:
        """Events of one type (CUSTOM: of one name)."""
        return [e for e in self.events if e["type"] == type_ and (name is None or e.get("name") == name)]

    @property
    def outcome(self) -> dict[str, Any]:
        """RUN_FINISHED's outcome."""
        return self.events[-1]["outcome"]

    @property
    def interrupt(self) -> dict[str, Any]:
        """The one interrupt of an interrupt outcome."""
        assert self.outcome["type"] == "interrupt", self.outcome
        return self.outcome["interrupts"][0]

    @property
    def reply(self) -> str:
        """The reply text."""
        return "".join(e["delta"] for e in self.of("TEXT_MESSAGE_CONTENT"))


def read_sse(lines: Any, stream: Stream, until: Any = None) -> None:
    """Parse frames (a response, or its ongoing `iter_lines()`) into `stream`; stop early when
    `until(event)` is true."""
    ident = None
    for line in (lines.iter_lines() if isinstance(lines, httpx.Response) else lines):
        if line.startswith("id: "):
            ident = int(line[4:])
        elif line.startswith("data: "):
            event = json.loads(line[6:])
            stream.events.append(event)
            stream.raw.append(line[6:])
            stream.ids.append(ident if ident is not None else -1)
            if until is not None and until(event):
                return


class Client:
    """Signs every request as the gateway would, for one caller."""

    def __init__(self, base: str, secret: str, platform: dict[str, Any]) -> None:
        self.base = base
        self.secret = secret
        self.platform = platform
        self.http = httpx.Client(base_url=base, timeout=60)

    def signed(self, method: str, target: str, body: bytes = b"") -> dict[str, str]:
        """The gateway's headers for this request."""
        return sign_request(self.secret, method, target, body, self.platform)

    def request(self, method: str, target: str, body: Any = None, headers: dict[str, str] | None = None) -> httpx.Response:
        """A signed request (`headers` replace the signed ones when given)."""
        raw = b"" if body is None else json.dumps(body).encode()
        hdrs = headers if headers is not None else self.signed(method, target, raw)
        return self.http.request(method, target, content=raw, headers={**hdrs, "Content-Type": "application/json"})

    def run_body(self, thread: str, run_id: str, text: str | None = None, msg_id: str | None = None,
                 resume: list[dict[str, Any]] | None = None) -> bytes:
        """A RunAgentInput."""
        messages = [{"id": msg_id or f"{run_id}.m", "role": "user", "content": text}] if text is not None else []
        body: dict[str, Any] = {"threadId": thread, "runId": run_id, "messages": messages}
        if resume is not None:
            body["resume"] = resume
        return json.dumps(body).encode()

    def run(self, thread: str, run_id: str, text: str | None = None, *, msg_id: str | None = None,
            resume: list[dict[str, Any]] | None = None, validate: bool = True,
            headers: dict[str, str] | None = None) -> Stream:
        """POST /agui and read the whole stream; a 200 stream must pass ag-ui-validate. `headers`
        are added to the signed ones (e.g. a caller's `traceparent`)."""
        return self.post_run(self.run_body(thread, run_id, text, msg_id, resume), validate=validate,
                             headers=headers)

    def post_run(self, raw: bytes, *, validate: bool = True, headers: dict[str, str] | None = None) -> Stream:
        """POST exactly this body to /agui and read the whole stream (validated when it is 200)."""
        headers = {**self.signed("POST", "/agui", raw), "Accept": "text/event-stream",
                   "Content-Type": "application/json", **(headers or {})}
        with self.http.stream("POST", "/agui", content=raw, headers=headers) as resp:
            stream = Stream(resp.status_code)
            if resp.status_code != 200:
                stream.error = json.loads(resp.read())["error"]
                return stream
            read_sse(resp, stream)
        if validate:
            check_stream(stream)
        return stream

    def refetch(self, run_id: str, last_event_id: int | None = None) -> Stream:
        """GET /agui/runs/{runId} (from Last-Event-ID + 1 when given)."""
        target = f"/agui/runs/{run_id}"
        headers = self.signed("GET", target)
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        with self.http.stream("GET", target, headers=headers) as resp:
            stream = Stream(resp.status_code)
            if resp.status_code == 200:
                read_sse(resp, stream)
            else:
                stream.error = json.loads(resp.read())["error"]
        return stream

    def trace(self, session: str) -> list[dict[str, Any]]:
        """The session's trace events."""
        resp = self.request("GET", f"/api/sessions/{session}/trace")
        assert resp.status_code == 200, resp.text
        return [json.loads(line) for line in resp.text.splitlines() if line.strip()]

    def close(self) -> None:
        """Close the HTTP client."""
        self.http.close()


def check_stream(stream: Stream) -> None:
    """The third-party conformance validator, strict (no warnings), plus frame ids 0..n-1."""
    assert_valid_agui([json.dumps(e) for e in stream.events], max_warnings=0)
    assert stream.ids == list(range(stream.ids[0], stream.ids[0] + len(stream.ids)))
