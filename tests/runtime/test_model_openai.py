"""The OpenAI-compatible adapter against the fake chat-completions server on loopback."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillc.runtime.model.base import ModelError, ModelRequest, ModelResponse, ToolCall, ToolSpec
from skillc.model_stub import FakeOpenAIServer
from skillc.runtime.model.openai import OpenAIChatModel, json_object_in_text

MESSAGES = [{"role": "system", "content": "You are a test."}, {"role": "user", "content": "Create Spring"}]
TOOLS = [ToolSpec("cms_space_list", "List spaces", {"type": "object", "properties": {}}),
         ToolSpec("cms_article_create", "Create an article",
                  {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]})]
SCHEMAS = {
    "route": {"type": "object", "properties": {"agent": {"type": "string", "enum": ["editor"]}}, "required": ["agent"]},
    "intent": {"type": "object", "properties": {"skills": {"type": "array", "items": {"type": "string"}}}},
    "plan": {"type": "object", "properties": {"nodes": {"type": "array"}}, "required": ["nodes"]},
}
CHOICES = {
    "route": {"agent": "editor"},
    "intent": {"skills": ["cms.article.lifecycle"]},
    "plan": {"nodes": [{"id": "a", "skill": "cms.article.lifecycle", "target": "cms_article_create", "deps": []}]},
}


class RecordingSleep:
    """An injected sleep: remembers the delays asked for and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def step(tools: list[ToolSpec] | None = None) -> ModelRequest:
    return ModelRequest(purpose="step", messages=MESSAGES, tools=list(TOOLS if tools is None else tools))


def answer_request(purpose: str) -> ModelRequest:
    return ModelRequest(purpose=purpose, messages=MESSAGES, answer_schema=SCHEMAS[purpose])  # type: ignore[arg-type]


def ask(model: OpenAIChatModel, request: ModelRequest) -> ModelResponse:
    async def go() -> ModelResponse:
        async with model:
            return await model.complete(request)
    return asyncio.run(go())


def make(srv: FakeOpenAIServer, sleep: RecordingSleep | None = None, **options: Any) -> OpenAIChatModel:
    options.setdefault("timeout", 5.0)
    return OpenAIChatModel(srv.url, "test-model", api_key="sk-test", sleep=sleep or RecordingSleep(), **options)


def test_step_returns_tool_calls_with_raw_arguments() -> None:
    calls = [{"id": "c1", "name": "cms_space_list", "arguments": "{}"},
             {"id": "c2", "name": "cms_article_create", "arguments": "{not json"}]
    with FakeOpenAIServer([{"tool_calls": calls, "text": "Listing first."}]) as srv:
        response = ask(make(srv), step())
    assert response.text == "Listing first."
    assert response.tool_calls == [ToolCall("c1", "cms_space_list", "{}"),
                                   ToolCall("c2", "cms_article_create", "{not json")]
    assert response.choice is None


def test_step_with_text_only() -> None:
    with FakeOpenAIServer([{"text": "Which space?"}]) as srv:
        response = ask(make(srv), step())
    assert (response.text, response.tool_calls, response.choice) == ("Which space?", [], None)


def test_step_request_shape() -> None:
    with FakeOpenAIServer([{"text": "ok"}]) as srv:
        ask(make(srv, headers={"X-Tenant": "acme"}), step())
        (sent,) = srv.requests
    assert sent.method == "POST" and sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.headers["x-skillc-purpose"] == "step"
    assert sent.headers["x-tenant"] == "acme"
    assert sent.body["model"] == "test-model"
    assert sent.body["messages"] == MESSAGES
    assert sent.body["tools"] == [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in TOOLS]
    assert "tool_choice" not in sent.body


def test_step_without_tools_sends_no_tools_and_no_key_means_no_auth_header() -> None:
    with FakeOpenAIServer([{"text": "hi"}]) as srv:
        ask(OpenAIChatModel(srv.url, "m", sleep=RecordingSleep()), step(tools=[]))
        (sent,) = srv.requests
    assert "tools" not in sent.body and "authorization" not in sent.headers


@pytest.mark.parametrize("purpose", ["route", "intent", "plan"])
def test_answer_purposes_force_the_answer_function(purpose: str) -> None:
    with FakeOpenAIServer([{"answer": CHOICES[purpose]}]) as srv:
        response = ask(make(srv), answer_request(purpose))
        (sent,) = srv.requests
    assert response.choice == CHOICES[purpose]
    assert response.tool_calls == []
    assert sent.headers["x-skillc-purpose"] == purpose
    (tool,) = sent.body["tools"]
    assert tool["type"] == "function"
    assert tool["function"]["name"] == "answer"
    assert tool["function"]["parameters"] == SCHEMAS[purpose]
    assert sent.body["tool_choice"] == {"type": "function", "function": {"name": "answer"}}


@pytest.mark.parametrize("text", [
    '{"agent": "editor"}',
    'Here you go:\n```json\n{"agent": "editor"}\n```',
    'I pick {"agent": "editor"} because {it fits}.',
])
def test_answer_in_text_when_tool_choice_is_ignored(text: str) -> None:
    with FakeOpenAIServer([{"text": text}]) as srv:
        response = ask(make(srv), answer_request("route"))
    assert response.choice == {"agent": "editor"}


def test_json_object_in_text_skips_non_objects() -> None:
    assert json_object_in_text('[1, 2] then {"a": {"b": 1}}') == {"a": {"b": 1}}
    assert json_object_in_text("[1, 2]") is None
    assert json_object_in_text("no braces at all") is None


@pytest.mark.parametrize(("canned", "purpose", "message"), [
    ({"raw": "<html>gateway</html>"}, "step", "not JSON"),
    ({"json": [1, 2]}, "step", "not a JSON object"),
    ({"json": {"choices": []}}, "step", "no choices"),
    ({"json": {"error": {"message": "model overloaded"}}}, "step", "returned an error: model overloaded"),
    ({"json": {"choices": [{"index": 0}]}}, "step", "no choices[0].message"),
    ({"json": {"choices": [{"message": {"tool_calls": {"id": "x"}}}]}}, "step", "tool_calls is not a list"),
    ({"json": {"choices": [{"message": {"tool_calls": [{"id": "x", "type": "function"}]}}]}},
     "step", "tool_calls[0] has no function object"),
    ({"json": {"choices": [{"message": {"tool_calls": [{"id": "x", "function": {"arguments": "{}"}}]}}]}},
     "step", "tool_calls[0] has no function name"),
    ({"json": {"choices": [{"message": {"tool_calls": [{"function": {"name": "t", "arguments": "{}"}}]}}]}},
     "step", "(t) has no id"),
    ({"tool_calls": [{"name": "answer", "arguments": "{bad"}]}, "route", "route answer's arguments are not valid JSON"),
    ({"tool_calls": [{"name": "answer", "arguments": "[1]"}]}, "intent", "intent answer's arguments are not a JSON object"),
    ({"tool_calls": [{"name": "cms_space_list", "arguments": "{}"}]}, "plan", "calling cms_space_list instead of `answer`"),
    ({"text": "I think the editor should do it."}, "route", "holds no JSON object"),
])
def test_malformed_replies_raise_specific_errors_without_retry(canned: dict[str, Any], purpose: str,
                                                                message: str) -> None:
    sleep = RecordingSleep()
    request = step() if purpose == "step" else answer_request(purpose)
    with FakeOpenAIServer([canned]) as srv:
        with pytest.raises(ModelError) as caught:
            ask(make(srv, sleep), request)
        assert len(srv.requests) == 1
    assert message in str(caught.value)
    assert sleep.delays == []


def test_timeout_then_successful_retry() -> None:
    sleep = RecordingSleep()
    with FakeOpenAIServer([{"hang": True}, {"text": "late but fine"}]) as srv:
        response = ask(make(srv, sleep, timeout=0.2, max_retries=2, retry_backoff=0.25), step())
        assert len(srv.requests) == 2
    assert response.text == "late but fine"
    assert sleep.delays == [0.25]


def test_server_error_then_success_and_backoff_doubles() -> None:
    sleep = RecordingSleep()
    canned = [{"status": 500}, {"status": 503}, {"tool_calls": [{"id": "c1", "name": "cms_space_list"}]}]
    with FakeOpenAIServer(canned) as srv:
        response = ask(make(srv, sleep, max_retries=2, retry_backoff=0.5), step())
        assert len(srv.requests) == 3
    assert response.tool_calls == [ToolCall("c1", "cms_space_list", "{}")]
    assert sleep.delays == [0.5, 1.0]


def test_retries_exhausted() -> None:
    sleep = RecordingSleep()
    with FakeOpenAIServer([{"status": 502}] * 3 + [{"text": "never reached"}]) as srv:
        with pytest.raises(ModelError, match=r"failed after 2 attempt\(s\): HTTP 502"):
            ask(make(srv, sleep, max_retries=1), step())
        assert len(srv.requests) == 2 and srv.remaining == 2
    assert sleep.delays == [0.5]


def test_bad_request_is_not_retried() -> None:
    sleep = RecordingSleep()
    canned = [{"status": 400, "body": {"error": {"message": "tools[0] is invalid"}}}, {"text": "never"}]
    with FakeOpenAIServer(canned) as srv:
        with pytest.raises(ModelError, match=r"HTTP 400 .*tools\[0\] is invalid"):
            ask(make(srv, sleep), step())
        assert len(srv.requests) == 1
    assert sleep.delays == []


def test_rate_limit_respects_a_small_retry_after_and_gives_up_on_a_long_one() -> None:
    sleep = RecordingSleep()
    canned = [{"status": 429, "headers": {"Retry-After": "2"}}, {"text": "ok"},
              {"status": 429, "headers": {"Retry-After": "120"}}, {"text": "not reached"}]
    with FakeOpenAIServer(canned) as srv:
        model = make(srv, sleep)
        assert ask(model, step()).text == "ok"
        assert sleep.delays == [2.0]
        with pytest.raises(ModelError, match="Retry-After 120 s is longer than the 10 s"):
            ask(model, step())
        assert len(srv.requests) == 3


def test_connection_refused_is_retried_then_reported() -> None:
    with FakeOpenAIServer() as srv:
        url = srv.url
    sleep = RecordingSleep()
    model = OpenAIChatModel(url, "m", sleep=sleep, max_retries=1, timeout=2.0)
    with pytest.raises(ModelError, match="after 2 attempt.*could not talk to .*ConnectError"):
        ask(model, step())
    assert sleep.delays == [0.5]


def test_one_model_serves_several_event_loops() -> None:
    # The CLI may run each turn under its own asyncio.run(); pooled connections must not leak across.
    with FakeOpenAIServer([{"text": "one"}, {"text": "two"}]) as srv:
        model = make(srv)
        first = asyncio.run(model.complete(step()))
        second = asyncio.run(model.complete(step()))
    assert (first.text, second.text) == ("one", "two")


def test_from_config_and_env_fallbacks() -> None:
    with FakeOpenAIServer([{"text": "ok"}]) as srv:
        env = {"SKILLC_MODEL_BASE_URL": srv.url, "SKILLC_MODEL": "env-model", "MY_KEY": "sk-env"}
        model = OpenAIChatModel.from_config({"api_key_env": "MY_KEY", "timeout": 3, "max_retries": 0}, env,
                                            sleep=RecordingSleep())
        ask(model, step())
        (sent,) = srv.requests
    assert (model.timeout, model.max_retries) == (3.0, 0)
    assert sent.body["model"] == "env-model" and sent.headers["authorization"] == "Bearer sk-env"
    assert "sk-env" not in repr(model)


def test_from_config_precedence_and_errors() -> None:
    cfg = {"base_url": "http://127.0.0.1:9/v1/", "model": "cfg-model"}
    model = OpenAIChatModel.from_config(cfg, {"SKILLC_MODEL": "env-model", "OPENAI_API_KEY": "sk-openai"})
    assert model.endpoint == "http://127.0.0.1:9/v1/chat/completions" and model.model == "cfg-model"
    assert model._headers["Authorization"] == "Bearer sk-openai"
    keyed = OpenAIChatModel.from_config({**cfg, "api_key": "sk-cfg"}, {"SKILLC_MODEL_API_KEY": "sk-skillc"})
    assert keyed._headers["Authorization"] == "Bearer sk-cfg"
    assert "Authorization" not in OpenAIChatModel.from_config(cfg, {})._headers
    with pytest.raises(ValueError, match="no base_url"):
        OpenAIChatModel.from_config({"model": "m"}, {})
    with pytest.raises(ValueError, match="no model name"):
        OpenAIChatModel.from_config({"base_url": "http://x/v1"}, {})
    with pytest.raises(ValueError, match="'MISSING', which is not set"):
        OpenAIChatModel.from_config({**cfg, "api_key_env": "MISSING"}, {})
    with pytest.raises(ValueError, match="max_retries must be a whole number"):
        OpenAIChatModel.from_config({**cfg, "max_retries": 1.5}, {})
    with pytest.raises(ValueError, match="timeout must be a number"):
        OpenAIChatModel.from_config({**cfg, "timeout": True}, {})


def test_model_stub_runs_as_a_command(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"responses": [{"answer": {"agent": "editor"}}]}))
    log = tmp_path / "requests.jsonl"
    command = [sys.executable, "-m", "skillc", "model-stub", "--port", "0",
               "--script", str(script), "--log", str(log)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("fake-openai listening on http://127.0.0.1:")
            url = line.split()[-1]
            response = ask(OpenAIChatModel(url, "m", sleep=RecordingSleep()), answer_request("route"))
            assert response.choice == {"agent": "editor"}
            used_up = httpx.post(url + "/chat/completions", json={"model": "m", "messages": []})
            assert used_up.status_code == 400 and "no canned response left" in used_up.text
        finally:
            proc.terminate()
        assert proc.wait(timeout=10) == 0
    logged = [json.loads(row) for row in log.read_text().splitlines()]
    assert [row["headers"].get("x-skillc-purpose") for row in logged] == ["route", None]


RECORDED = Path(__file__).parents[1] / "fixtures" / "openai" / "chat_completion_tool_call.json"


def test_a_recorded_response_keeps_its_usage_model_and_id() -> None:
    """What telemetry reports of a model call (token usage, the model that answered, the
    response id, the server) comes from the response, not from what was asked."""
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    with FakeOpenAIServer([{"json": recorded}]) as srv:
        model = make(srv)
        response = ask(model, step())
    assert response.tool_calls == [ToolCall("call_DdmO9pD3xa9XTPNJ32zg2hcA", "cms_space_list", "{}")]
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (1117, 46)
    assert (response.response_model, response.response_id) == ("gpt-4o-2024-08-06", recorded["id"])
    assert (model.server_address, model.server_port) == ("127.0.0.1", int(srv.url.rsplit(":", 1)[1].split("/")[0]))


def test_a_response_without_usage_has_none() -> None:
    with FakeOpenAIServer([{"json": {"choices": [{"message": {"content": "hi"}}]}}]) as srv:
        response = ask(make(srv), step())
    assert (response.text, response.usage, response.response_model, response.response_id) == ("hi", None, None, None)
