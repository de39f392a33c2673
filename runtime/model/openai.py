"""The OpenAI-compatible adapter: `/v1/chat/completions` with tool calling, over httpx.

Purpose `step` offers the request's tools and returns text + tool calls (arguments kept as the
raw text the server sent). Purposes `route`, `intent` and `plan` offer exactly one function,
`answer`, whose parameters are the request's `answer_schema`, force it with `tool_choice`, and
parse its arguments into `ModelResponse.choice`.
"""
from __future__ import annotations

import asyncio
import email.utils
import json
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx

from skillc.runtime.model.base import ModelError, ModelRequest, ModelResponse, ToolCall, ToolSpec, Usage

ANSWER_FUNCTION = "answer"
PURPOSE_HEADER = "X-Skillc-Purpose"
ANSWER_PURPOSES = frozenset({"route", "intent", "plan"})
_ANSWER_DESCRIPTIONS = {
    "route": "Give your answer: the agent that should handle this conversation.",
    "intent": "Give your answer: the candidate skills for the user's request.",
    "plan": "Give your answer: the task graph that fulfils the user's request.",
}
_EXCERPT = 300
# A reply that is mostly prose may hold many braces; trying each is quadratic, so stop early.
_MAX_OBJECT_STARTS = 64

Sleep = Callable[[float], Awaitable[None]]


class OpenAIChatModel:
    """A `Model` over any OpenAI-compatible chat-completions server (OpenAI, vLLM, llama.cpp, …)."""

    provider = "openai"  # the protocol spoken; what telemetry reports as gen_ai.provider.name

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        retry_backoff: float = 0.5,
        max_retry_after: float = 10.0,
        headers: Mapping[str, str] | None = None,
        sleep: Sleep = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """`base_url` is the API root as OpenAI clients take it (e.g. `http://host:8000/v1`)."""
        self.base_url = base_url.rstrip("/")
        # Accept a full endpoint too: people paste what their server's docs print.
        self.endpoint = (self.base_url if self.base_url.endswith("/chat/completions")
                         else self.base_url + "/chat/completions")
        self.model = model
        url = urllib.parse.urlsplit(self.endpoint)
        self.server_address: str | None = url.hostname
        self.server_port: int | None = url.port or {"http": 80, "https": 443}.get(url.scheme)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.retry_backoff = float(retry_backoff)
        self.max_retry_after = float(max_retry_after)
        self._headers = {"Content-Type": "application/json", **dict(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._sleep = sleep
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        # Never show the key: reprs end up in logs and tracebacks.
        return f"OpenAIChatModel(endpoint={self.endpoint!r}, model={self.model!r})"

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], env: Mapping[str, str], **kwargs: Any) -> OpenAIChatModel:
        """Build from the `[model]` table of skillc.toml, falling back to SKILLC_MODEL_* / OPENAI_* env vars.

        Keys: base_url, model, api_key or api_key_env, timeout, max_retries, retry_backoff,
        headers. `kwargs` go to the constructor (e.g. `sleep`, `transport` in tests).
        Raises ValueError naming the missing or ill-typed setting.
        """
        base_url = cfg.get("base_url") or env.get("SKILLC_MODEL_BASE_URL") or env.get("OPENAI_BASE_URL")
        if not base_url:
            raise ValueError("model config: no base_url (set [model] base_url or SKILLC_MODEL_BASE_URL)")
        model = cfg.get("model") or env.get("SKILLC_MODEL")
        if not model:
            raise ValueError("model config: no model name (set [model] model or SKILLC_MODEL)")
        api_key = cfg.get("api_key")
        if not api_key and cfg.get("api_key_env"):
            api_key = env.get(str(cfg["api_key_env"]))
            if not api_key:
                raise ValueError(f"model config: api_key_env names {cfg['api_key_env']!r}, which is not set")
        if not api_key:
            # Local servers need no key, so none at all is fine.
            api_key = env.get("SKILLC_MODEL_API_KEY") or env.get("OPENAI_API_KEY") or None
        options: dict[str, Any] = {}
        for key, kind, minimum in (("timeout", float, 0.0), ("max_retries", int, 0),
                                   ("retry_backoff", float, 0.0), ("max_retry_after", float, 0.0)):
            if key in cfg:
                options[key] = _number_setting(key, cfg[key], kind, minimum)
        if "headers" in cfg:
            headers = cfg["headers"]
            if not isinstance(headers, Mapping) or not all(isinstance(v, str) for v in headers.values()):
                raise ValueError("model config: headers must be a table of strings")
            options["headers"] = dict(headers)
        options.update(kwargs)
        return cls(str(base_url), str(model), api_key=api_key, **options)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Send one request (retrying transient failures) and parse the reply for its purpose."""
        body = build_body(self.model, request)
        payload = await self._post(body, request.purpose)
        return parse_response(payload, request.purpose)

    async def aclose(self) -> None:
        """Close the HTTP connection pool (a later call opens a new one)."""
        client, self._client = self._client, None
        if client is not None and self._client_loop is _running_loop():
            await client.aclose()
        self._client_loop = None

    async def __aenter__(self) -> OpenAIChatModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _client_for_loop(self) -> httpx.AsyncClient:
        # A pooled connection belongs to the event loop that opened it; callers that run each
        # turn under its own asyncio.run() would otherwise reuse dead connections.
        loop = _running_loop()
        if self._client is None or self._client_loop is not loop:
            self._client = httpx.AsyncClient(timeout=self.timeout, headers=self._headers,
                                             transport=self._transport)
            self._client_loop = loop
        return self._client

    async def _post(self, body: dict[str, Any], purpose: str) -> dict[str, Any]:
        client = self._client_for_loop()
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            delay = self.retry_backoff * 2 ** (attempt - 1)
            try:
                response = await client.post(self.endpoint, json=body, headers={PURPOSE_HEADER: purpose})
            except httpx.TimeoutException as exc:
                failure = f"no answer from {self.endpoint} within {self.timeout:g} s ({type(exc).__name__})"
            except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                failure = f"could not talk to {self.endpoint}: {type(exc).__name__}: {exc}"
            else:
                if response.is_success:
                    return _decode_payload(response)
                failure = f"HTTP {response.status_code} from {self.endpoint}: {_excerpt(response.text)}"
                if not _retryable_status(response.status_code):
                    raise ModelError(failure)
                retry_after = _retry_after_seconds(response.headers.get("retry-after"))
                if retry_after is not None:
                    if retry_after > self.max_retry_after:
                        raise ModelError(f"{failure} (Retry-After {retry_after:g} s is longer than the "
                                         f"{self.max_retry_after:g} s this adapter waits)")
                    delay = retry_after
            if attempt == attempts:
                raise ModelError(f"model request failed after {attempts} attempt(s): {failure}")
            await self._sleep(delay)
        raise AssertionError("unreachable")  # the loop always returns or raises


def build_body(model: str, request: ModelRequest) -> dict[str, Any]:
    """The JSON body of a chat-completions request for `request`."""
    body: dict[str, Any] = {"model": model, "messages": request.messages}
    if request.purpose in ANSWER_PURPOSES:
        body["tools"] = [_function(ANSWER_FUNCTION, _ANSWER_DESCRIPTIONS[request.purpose],
                                   request.answer_schema or {"type": "object"})]
        body["tool_choice"] = {"type": "function", "function": {"name": ANSWER_FUNCTION}}
    elif request.purpose == "step":
        # tool_choice is left out: "auto" is the default, and some servers reject it spelled out.
        if request.tools:
            body["tools"] = [_tool_json(tool) for tool in request.tools]
    else:
        raise ModelError(f"unknown request purpose {request.purpose!r}")
    return body


def parse_response(payload: Mapping[str, Any], purpose: str) -> ModelResponse:
    """Turn a chat-completions reply into a ModelResponse; ModelError says what is malformed."""
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices:
        error = payload.get("error")
        if error:
            detail = error.get("message") if isinstance(error, Mapping) else error
            raise ModelError(f"the model server returned an error: {_excerpt(str(detail))}")
        raise ModelError(f"the model server's reply has no choices: {_excerpt(json.dumps(payload))}")
    first = choices[0]
    message = first.get("message") if isinstance(first, Mapping) else None
    if not isinstance(message, Mapping):
        raise ModelError("the model server's reply has no choices[0].message object")
    text = _content_text(message.get("content"))
    calls = _tool_calls(message.get("tool_calls"))
    if purpose in ANSWER_PURPOSES:
        response = ModelResponse(text=text, choice=_answer_choice(purpose, calls, text))
    else:
        response = ModelResponse(text=text, tool_calls=calls)
    response.usage = _usage(payload.get("usage"))
    response.response_model = _text_or_none(payload.get("model"))
    response.response_id = _text_or_none(payload.get("id"))
    return response


def _usage(raw: Any) -> Usage | None:
    """`usage.prompt_tokens` / `completion_tokens` as the server counted them (None when absent)."""
    if not isinstance(raw, Mapping):
        return None
    prompt, completion = raw.get("prompt_tokens"), raw.get("completion_tokens")
    if not (isinstance(prompt, int) and isinstance(completion, int) and _count(prompt) and _count(completion)):
        return None
    return Usage(input_tokens=prompt, output_tokens=completion)


def _count(value: int) -> bool:
    return not isinstance(value, bool) and value >= 0


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function",
            "function": {"name": name, "description": description, "parameters": parameters}}


def _tool_json(tool: ToolSpec) -> dict[str, Any]:
    return _function(tool.name, tool.description, tool.parameters or {"type": "object"})


def _decode_payload(response: httpx.Response) -> dict[str, Any]:
    try:
        payload = response.json()
    except ValueError:
        raise ModelError(f"the model server's reply is not JSON: {_excerpt(response.text)}") from None
    if not isinstance(payload, dict):
        raise ModelError(f"the model server's reply is not a JSON object: {_excerpt(response.text)}")
    return payload


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        # Some servers send content parts; only text parts matter here.
        return "".join(part.get("text", "") for part in content
                       if isinstance(part, Mapping) and part.get("type") == "text")
    raise ModelError(f"the model server's message content is a {type(content).__name__}, not text")


def _tool_calls(raw: Any) -> list[ToolCall]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ModelError("the model server's tool_calls is not a list")
    calls = []
    for index, item in enumerate(raw):
        where = f"tool_calls[{index}]"
        if not isinstance(item, Mapping):
            raise ModelError(f"{where} is not an object")
        if item.get("type", "function") != "function":
            raise ModelError(f"{where} has type {item.get('type')!r}, not 'function'")
        function = item.get("function")
        if not isinstance(function, Mapping):
            raise ModelError(f"{where} has no function object")
        name, call_id = function.get("name"), item.get("id")
        if not isinstance(name, str) or not name:
            raise ModelError(f"{where} has no function name")
        if not isinstance(call_id, str) or not call_id:
            raise ModelError(f"{where} ({name}) has no id")
        arguments = function.get("arguments")
        if arguments is None:
            arguments = "{}"  # some servers leave it out for functions without parameters
        elif isinstance(arguments, (dict, list)):
            arguments = json.dumps(arguments, ensure_ascii=False)  # some servers send an object
        elif not isinstance(arguments, str):
            raise ModelError(f"{where} ({name}) arguments are a {type(arguments).__name__}, not text")
        calls.append(ToolCall(id=call_id, name=name, arguments=arguments))
    return calls


def _answer_choice(purpose: str, calls: list[ToolCall], text: str) -> dict[str, Any]:
    for call in calls:
        if call.name == ANSWER_FUNCTION:
            try:
                choice = json.loads(call.arguments)
            except ValueError as exc:
                raise ModelError(f"the {purpose} answer's arguments are not valid JSON ({exc}): "
                                 f"{_excerpt(call.arguments)}") from None
            if not isinstance(choice, dict):
                raise ModelError(f"the {purpose} answer's arguments are not a JSON object: "
                                 f"{_excerpt(call.arguments)}")
            return choice
    if calls:
        names = ", ".join(call.name for call in calls)
        raise ModelError(f"the model answered {purpose} by calling {names} instead of `{ANSWER_FUNCTION}`")
    # The server ignored tool_choice (common on servers without forced calls): look for JSON.
    found = json_object_in_text(text)
    if found is None:
        raise ModelError(f"the model answered {purpose} without calling `{ANSWER_FUNCTION}` and its text "
                         f"holds no JSON object: {_excerpt(text) or '(empty)'}")
    return found


def json_object_in_text(text: str) -> dict[str, Any] | None:
    """The first JSON object found in `text` (whole text, a ```json fence or prose around it), else None."""
    stripped = text.strip()
    try:
        whole = json.loads(stripped)
    except ValueError:
        pass
    else:
        return whole if isinstance(whole, dict) else None
    decoder = json.JSONDecoder()
    start = stripped.find("{")
    tries = 0
    while start != -1 and tries < _MAX_OBJECT_STARTS:
        tries += 1
        try:
            value, _ = decoder.raw_decode(stripped, start)
        except ValueError:
            pass
        else:
            if isinstance(value, dict):
                return value
        start = stripped.find("{", start + 1)
    return None


def _retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def _retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _number_setting(key: str, value: Any, kind: type, minimum: float) -> Any:
    # bool is an int in Python, but `timeout = true` is a mistake worth naming.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not isinstance(value, int)):
        raise ValueError(f"model config: {key} must be a {'whole ' if kind is int else ''}number, got {value!r}")
    if value < minimum:
        raise ValueError(f"model config: {key} must be at least {minimum:g}, got {value!r}")
    return kind(value)


def _excerpt(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
