"""`skillc model-stub`: a fake OpenAI-compatible chat-completions server on loopback, playing
canned responses in order, so `skillc chat` and `skillc serve` can be tried without a model, and
tests can script the model over real HTTP.

Each canned response is a mapping (JSON-friendly, so a script file can hold them):

    {"tool_calls": [{"name": "t", "arguments": {...} | "raw text", "id"?: "c1"}], "text"?: "…"}
    {"answer": {...}}            a call of the forced `answer` function with these arguments
    {"text": "…"}                a plain text reply
    {"json": <any>}              this exact JSON body (e.g. {"choices": []})
    {"raw": "not json"}          this exact body text
    {"status": 500, "body"?: {...}}   an HTTP error (default body: an OpenAI-style error)
    {"hang": true | seconds}     no answer until the server closes (or the seconds pass)

Any of them may add "status" and "headers" (e.g. {"status": 429, "headers": {"Retry-After": "0"}}).
Every request is recorded. Start it from Python (`with FakeOpenAIServer(responses) as srv:
srv.url`, `from skillc.model_stub import FakeOpenAIServer`) or as
`skillc model-stub --port P --script FILE.json`.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TextIO

_KINDS = ("hang", "raw", "json", "tool_calls", "answer", "text", "status")
_HANG_LIMIT = 60.0


@dataclass
class RecordedRequest:
    """One request the fake server received: `headers` has lower-cased names, `body` is parsed JSON or None."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: str

    def to_json(self) -> dict[str, Any]:
        """A JSON-friendly form (for the `--log` file)."""
        return {"method": self.method, "path": self.path, "headers": self.headers, "body": self.body}


def check_response(spec: Any) -> str | None:
    """What is wrong with one canned response, or None when it is usable."""
    if not isinstance(spec, Mapping):
        return f"a canned response must be a mapping, got {spec!r}"
    if not any(kind in spec for kind in _KINDS):
        return f"a canned response needs one of {', '.join(_KINDS)}: {spec!r}"
    if "tool_calls" in spec:
        calls = spec["tool_calls"]
        if not isinstance(calls, list) or not all(isinstance(c, Mapping) and "name" in c for c in calls):
            return f"tool_calls must be a list of {{name, arguments}}: {spec!r}"
    if "status" in spec and not isinstance(spec["status"], int):
        return f"status must be an integer: {spec!r}"
    return None


class FakeOpenAIServer:
    """A chat-completions server on 127.0.0.1 that answers from a queue and records what it got."""

    def __init__(self, responses: Iterable[Mapping[str, Any]] = (), *, host: str = "127.0.0.1",
                 port: int = 0, log: TextIO | None = None) -> None:
        """`port` 0 picks a free one; `log` receives each request as a JSON line."""
        self._queue: deque[Mapping[str, Any]] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._released = threading.Event()  # set on close: wakes handlers that hang
        self._call_ids = 0
        self._log = log
        self._host, self._port = host, port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.add(*responses)

    @property
    def url(self) -> str:
        """The API root to give a client as base_url (ends in /v1)."""
        if self._httpd is None:
            raise RuntimeError("the fake server is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received so far, in order."""
        with self._lock:
            return list(self._requests)

    @property
    def remaining(self) -> int:
        """How many canned responses are still queued."""
        with self._lock:
            return len(self._queue)

    def add(self, *responses: Mapping[str, Any]) -> None:
        """Queue more canned responses (ValueError for one that is malformed)."""
        for spec in responses:
            problem = check_response(spec)
            if problem:
                raise ValueError(problem)
        with self._lock:
            self._queue.extend(responses)

    def start(self) -> FakeOpenAIServer:
        """Bind and serve in a daemon thread."""
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer((self._host, self._port), handler)
        self._httpd.daemon_threads = True
        # A short poll interval: close() waits up to one interval, and tests start many servers.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="fake-openai",
                                        daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, releasing any hanging request."""
        self._released.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)
            if self._log is not None:
                self._log.write(json.dumps(request.to_json()) + "\n")
                self._log.flush()

    def _next(self) -> Mapping[str, Any] | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None

    def _next_call_id(self) -> str:
        with self._lock:
            self._call_ids += 1
            return f"call_fake_{self._call_ids}"

    def _completion(self, spec: Mapping[str, Any], model: Any) -> dict[str, Any]:
        """An OpenAI-shaped chat.completion for a tool_calls / answer / text response."""
        calls = list(spec.get("tool_calls", ()))
        if "answer" in spec:
            calls.append({"name": "answer", "arguments": spec["answer"]})
        tool_calls = []
        for call in calls:
            arguments = call.get("arguments", {})
            tool_calls.append({
                "id": call.get("id") or self._next_call_id(),
                "type": "function",
                "function": {"name": call["name"],
                             "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)},
            })
        message: dict[str, Any] = {"role": "assistant", "content": spec.get("text")}
        if tool_calls:
            message["tool_calls"] = tool_calls
        return {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
            "model": model if isinstance(model, str) else "fake",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }


class _Handler(BaseHTTPRequestHandler):
    """Serves one request from the owning FakeOpenAIServer (set as the class attribute `fake`)."""

    fake: FakeOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass  # tests and the pty session want a quiet server

    def do_GET(self) -> None:
        self._recorded(b"")
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        else:
            self._send(404, _error(f"fake server: no route {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self._recorded(self.rfile.read(length))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, _error(f"fake server: no route {self.path}"))
            return
        spec = self.fake._next()
        if spec is None:
            # 400, not 5xx: a used-up script must fail at once, not be retried.
            self._send(400, _error("fake server: no canned response left"))
            return
        headers = dict(spec.get("headers", {}))
        if "hang" in spec:
            hang = spec["hang"]
            numeric = isinstance(hang, (int, float)) and not isinstance(hang, bool)
            self.fake._released.wait(float(hang) if numeric else _HANG_LIMIT)
            self.close_connection = True
            return
        if "raw" in spec:
            self._send(spec.get("status", 200), str(spec["raw"]).encode(), headers, "text/plain")
        elif "json" in spec:
            self._send(spec.get("status", 200), spec["json"], headers)
        elif any(kind in spec for kind in ("tool_calls", "answer", "text")):
            model = body.get("model") if isinstance(body, dict) else None
            self._send(spec.get("status", 200), self.fake._completion(spec, model), headers)
        else:
            status = spec["status"]
            self._send(status, spec.get("body", _error(f"fake status {status}")), headers)

    def _recorded(self, raw: bytes) -> Any:
        text = raw.decode("utf-8", "replace")
        try:
            body = json.loads(text) if text else None
        except ValueError:
            body = None
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.fake._record(RecordedRequest(self.command, self.path, headers, body, text))
        return body

    def _send(self, status: int, body: Any, headers: Mapping[str, str] | None = None,
              content_type: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, str(value))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout); nothing to tell it


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "fake_server"}}


def load_script(path: str) -> list[dict[str, Any]]:
    """Canned responses from a JSON file: a list, or {"responses": [...]}."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if isinstance(data, dict):
        data = data.get("responses")
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of responses or {{\"responses\": [...]}}")
    return data


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGINT/SIGTERM; prints `fake-openai listening on <url>` once ready."""
    parser = argparse.ArgumentParser(prog="skillc model-stub",
                                     description="A fake OpenAI-compatible chat-completions server.")
    from skillc.commands.model_stub import configure

    configure(parser)
    return serve(parser.parse_args(argv))


def serve(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM; prints `fake-openai listening on <url>` once ready."""
    try:
        responses = load_script(args.script) if args.script else []
        log = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115 - lives until exit
        server = FakeOpenAIServer(responses, host=args.host, port=args.port, log=log)
    except (OSError, ValueError) as exc:
        print(f"fake-openai: {exc}", file=sys.stderr)
        return 2
    # Both signals become KeyboardInterrupt so the `with` block closes the server either way.
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    with server:
        print(f"fake-openai listening on {server.url}", flush=True)
        try:
            while True:
                signal.pause()
        except KeyboardInterrupt:
            pass
    if log is not None:
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
