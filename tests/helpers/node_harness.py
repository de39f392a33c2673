"""A runtime for node tests without MCP: an inline studio compiled into a temp folder, a fake
gateway serving canned responses, the `ModelDouble` answering from a script and recording every
request (so a test can read the tools and prompts the model was offered).
"""
from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any, Iterable

from skillc.runtime.outside.config import Settings
from skillc.runtime.session import Runtime, Session
from skillc.runtime.mcp.result import CallOutcome, ToolInfo
from skillc.runtime.model.base import ModelRequest, ModelResponse, ToolCall
from skillc.runtime.model.double import ModelDouble
from skillc.runtime.store import Store

PLATFORM = {"userId": 7, "memberId": 70, "name": "alice", "organId": 9, "organName": "Acme",
            "organType": "COMPANY", "deptPath": "/1/9"}
START = 1_798_761_600.0  # 2027-01-01T00:00:00Z


class FakeGateway:
    """The gateway surface the runtime uses: `catalog` and `call`; responses per tool, the last repeats."""

    def __init__(self, tools: dict[str, Any]) -> None:
        """`tools`: name -> {"responses": [...], "title"?, "description"?, "input_schema"?}."""
        self.catalog: dict[str, ToolInfo] = {}
        self._responses: dict[str, deque[Any]] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        for name, spec in tools.items():
            self.catalog[name] = ToolInfo(name=name, title=spec.get("title"), description=spec.get("description"),
                                          input_schema=spec.get("input_schema") or {"type": "object"}, server="fake")
            self._responses[name] = deque(spec.get("responses") or [{"ok": True}])

    async def call(self, tool: str, args: dict[str, Any], *, timeout: float | None = None) -> CallOutcome:
        """Answer with the tool's next canned response."""
        self.calls.append((tool, args))
        queue = self._responses[tool]
        response = queue.popleft() if len(queue) > 1 else queue[0]
        return CallOutcome(response=response, error=None, message="")

    async def aclose(self) -> None:
        """Nothing to close."""


def step(*calls: tuple[str, dict[str, Any]], text: str = "") -> ModelResponse:
    """A step response with the given (tool, args) calls."""
    return ModelResponse(text=text, tool_calls=[ToolCall(id=f"c{i}", name=name, arguments=json.dumps(args))
                                                for i, (name, args) in enumerate(calls)])


def choice(value: Any) -> ModelResponse:
    """A route/intent/plan answer."""
    return ModelResponse(choice=value)


class Script:
    """Responses played in order; each request is recorded by the ModelDouble around it."""

    def __init__(self) -> None:
        self.queue: deque[ModelResponse] = deque()

    def add(self, responses: Iterable[ModelResponse]) -> None:
        """Queue more responses."""
        self.queue.extend(responses)

    def __call__(self, request: ModelRequest) -> ModelResponse:
        return self.queue.popleft()


class Harness:
    """A compiled studio, a fake gateway, a recording model double, a store and a runtime."""

    def __init__(self, tmp: Path, studio: dict[str, Any], tools: dict[str, Any], *,
                 config: dict[str, Any] | None = None, compiled: Any = None) -> None:
        if compiled is None:
            from skillc.compiler.build import compile_studio
            from skillc.compiler.sources import studio_from_mapping
            from skillc.runtime.compiled.loader import load_compiled

            compile_studio(studio_from_mapping(studio, origin="test"), tmp / "compiled")
            compiled = load_compiled(tmp / "compiled")
        self.compiled = compiled
        self.gateway = FakeGateway(tools)
        self.script = Script()
        self.model = ModelDouble(self.script)
        self.settings = Settings.from_mapping(config or {})
        self.now = START
        self.progress: list[tuple[str, str]] = []
        self.store = Store(tmp / "store.sqlite")
        self.runtime = Runtime(compiled, self.gateway, self.model, self.store, self.settings,
                               clock=lambda: self.now, seed=7, on_progress=lambda tool, label: self.progress.append((tool, label)))

    async def session(self) -> Session:
        """A fresh session with the default platform identity."""
        return await self.runtime.open_session(PLATFORM, session_id="s1")

    def step_requests(self) -> list[ModelRequest]:
        """The `step` requests so far."""
        return [r for r in self.model.requests if r.purpose == "step"]


def tool_names(request: ModelRequest) -> list[str]:
    """The names of the tools a request offered."""
    return [t.name for t in request.tools]


def skill(key: str, tools: list[str], contract: str, **extra: Any) -> dict[str, Any]:
    """A skill entry of an inline studio."""
    return {"skill_key": key, "skill_name": extra.pop("name", key), "semantic_desc": extra.pop("desc", f"Does {key}."),
            "skill_manual": extra.pop("manual", f"Manual of {key}."), "status": "ACTIVE", "tools": tools,
            "contract": contract, **extra}


def agent(code: str, skills: list[str]) -> dict[str, Any]:
    """An agent entry of an inline studio."""
    return {"agent_code": code, "agent_name": code.title(), "identity_desc": "Identity", "mission_desc": "Mission",
            "boundary_desc": "Boundary", "style_desc": "Style", "principle_desc": "Principle", "status": "ACTIVE",
            "skills": skills}
