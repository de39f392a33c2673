"""The scenario runner's canned-tool server, driven through the real McpGateway in-process."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from skillc.runtime.words.errors import ERRORS
from skillc.runtime.mcp import McpGateway
from skillc.scenario import build_canned_server

pytestmark = pytest.mark.anyio
TOOL_TIMEOUT = 1.0  # the scenario runner's tool timeout (0.3 s was missed under CI load); the only wait here


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Harness:
    """The runner's side: what on_invoked and on_crash saw, and the gateway."""

    def __init__(self) -> None:
        self.invoked: list[tuple[str, dict[str, Any]]] = []
        self.crashes = 0
        self.on_crash_hook: Callable[[], None] | None = None
        self.gateway_invoked: list[str] = []
        self.gw: McpGateway

    def on_invoked(self, tool: str, args: dict[str, Any]) -> None:
        self.invoked.append((tool, args))

    def on_crash(self) -> None:
        self.crashes += 1
        if self.on_crash_hook is not None:
            self.on_crash_hook()


@asynccontextmanager
async def canned(tools: list[dict[str, Any]]) -> AsyncIterator[Harness]:
    """A gateway over a canned server for `tools` (the gateway's own on_invoked must stay silent)."""
    h = Harness()
    server = build_canned_server(tools, on_invoked=h.on_invoked, on_crash=h.on_crash)
    async with McpGateway({"scenario": server}, timeout=TOOL_TIMEOUT,
                          on_invoked=lambda tool, args: h.gateway_invoked.append(tool)) as gw:
        h.gw = gw
        yield h
    assert h.gateway_invoked == []


def tool(name: str, *responses: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "responses": list(responses), **extra}


async def test_list_tools_advertises_schema_verbatim_and_title() -> None:
    schema = {"type": "object", "properties": {"title": {"type": "string", "minLength": 2},
                                               "spaceId": {"type": "integer"}},
              "required": ["title", "spaceId"], "additionalProperties": False}
    async with canned([tool("cms_article_create", title="Create article", input_schema=schema),
                       tool("cms_space_list")]) as h:
        create, spaces = h.gw.catalog["cms_article_create"], h.gw.catalog["cms_space_list"]
        assert (create.input_schema, create.title, create.server) == (schema, "Create article", "scenario")
        assert (spaces.input_schema, spaces.title) == ({"type": "object"}, None)


async def test_json_response_is_structured_content_with_json_text() -> None:
    body = {"code": 200, "data": {"id": 17, "title": "Spring"}}
    async with canned([tool("t", {"json": body})]) as h:
        outcome = await h.gw.call("t", {"title": "Spring"})
        assert (outcome.error, outcome.response) == (None, body)
        assert outcome.message == '{"code": 200, "data": {"id": 17, "title": "Spring"}}'
        assert h.invoked == [("t", {"title": "Spring"})]


async def test_raw_result_shapes() -> None:
    # Below the gateway: what a client really receives for json and text answers.
    from mcp import Client

    server = build_canned_server([tool("j", {"json": {"a": 1}}), tool("s", {"text": "{\"b\": 2}"})],
                                 on_invoked=lambda t, a: None, on_crash=lambda: None)
    async with Client(server.target()) as client:
        j = await client.call_tool("j", {})
        s = await client.call_tool("s", {})
    assert (j.structured_content, j.content[0].text, j.is_error) == ({"a": 1}, '{"a": 1}', False)
    assert (s.structured_content, s.content[0].text) == (None, '{"b": 2}')


async def test_text_and_error_responses() -> None:
    async with canned([tool("t", {"text": "plain words"}, {"text": "[1, 2]"}, {"error": "space is locked"})]) as h:
        assert (await h.gw.call("t", {})).response == {"text": "plain words"}
        assert (await h.gw.call("t", {})).response == [1, 2]  # text that parses is JSON ("Response JSON")
        failed = await h.gw.call("t", {})
        assert (failed.error, failed.message) == ("MCP_TOOL_ERROR", "space is locked")
        assert len(h.invoked) == 3  # an error result still reached the tool


async def test_responses_in_order_and_the_last_repeats() -> None:
    async with canned([tool("t", {"json": {"n": 1}}, {"json": {"n": 2}}), tool("u", {"json": {"u": 0}})]) as h:
        seen = [(await h.gw.call("t", {})).response["n"] for _ in range(4)]
        assert seen == [1, 2, 2, 2]
        assert (await h.gw.call("u", {})).response == {"u": 0}  # counters are per tool


async def test_tool_without_responses_answers_empty_object() -> None:
    async with canned([tool("t")]) as h:
        assert (await h.gw.call("t", {})).response == {}


@pytest.mark.parametrize(("fault", "error", "reaches_tool"), [
    ("rpc", "MCP_RPC_ERROR", False),
    ("invalid_params", "MCP_INVALID_PARAMS", False),
    ("unreachable", "TOOL_UNREACHABLE", False),
    ("io", "TOOL_IO_ERROR", True),
    ("timeout", "TOOL_TIMEOUT", True),
])
async def test_fault_classification_invocation_and_recovery(fault: str, error: str, reaches_tool: bool) -> None:
    async with canned([tool("t", {"fault": fault}, {"json": {"after": True}})]) as h:
        outcome = await h.gw.call("t", {"k": 1})
        assert (outcome.error, outcome.response) == (error, None)
        assert error in ERRORS
        assert h.invoked == ([("t", {"k": 1})] if reaches_tool else [])
        # The fault used up its entry, and the gateway recovers (reconnecting where it must).
        assert (await h.gw.call("t", {"k": 2})).response == {"after": True}
        assert h.invoked[-1] == ("t", {"k": 2})


async def test_faults_consume_entries_in_sequence() -> None:
    responses = [{"fault": "unreachable"}, {"fault": "rpc"}, {"fault": "io"}, {"json": {"n": 4}}]
    async with canned([tool("t", *responses)]) as h:
        errors = [(await h.gw.call("t", {"i": i})).error for i in range(5)]
        assert errors == ["TOOL_UNREACHABLE", "MCP_RPC_ERROR", "TOOL_IO_ERROR", None, None]
        assert [args["i"] for _, args in h.invoked] == [2, 3, 4]


async def test_crash_invokes_then_reports_and_never_answers() -> None:
    async with canned([tool("w", {"fault": "crash"}, {"json": {"ok": True}})]) as h:
        call = asyncio.create_task(h.gw.call("w", {"title": "Spring"}))
        h.on_crash_hook = call.cancel  # the runner abandons the runtime by cancelling its task
        with pytest.raises(asyncio.CancelledError):
            await call
        assert (h.invoked, h.crashes) == ([("w", {"title": "Spring"})], 1)
        # A fresh runtime (here: the same gateway) gets the next entry.
        assert (await h.gw.call("w", {})).response == {"ok": True}


async def test_concurrent_calls_take_distinct_entries() -> None:
    async with canned([tool("t", {"json": {"n": 1}}, {"json": {"n": 2}}, {"json": {"n": 3}})]) as h:
        outcomes = await asyncio.gather(h.gw.call("t", {}), h.gw.call("t", {}))
        assert sorted(o.response["n"] for o in outcomes) == [1, 2]


@pytest.mark.parametrize(("tools", "message"), [
    ([tool("t", {"fault": "explode"})], "unknown fault 'explode'"),
    ([tool("t", {"yaml": 1})], "unknown response kind 'yaml'"),
    ([tool("t", {"json": 1, "text": "x"})], "expected one of"),
    ([tool("t"), tool("t")], "listed twice"),
    ([{"name": "t", "respones": []}], "unknown keys ['respones']"),
    ([{"title": "no name"}], "non-empty `name`"),
])
def test_malformed_tools_are_rejected(tools: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(ValueError) as info:
        build_canned_server(tools, on_invoked=lambda t, a: None, on_crash=lambda: None)
    assert message in str(info.value)
