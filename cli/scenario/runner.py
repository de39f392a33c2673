"""`skillc scenario run`: scripted conversations through the real runtime (conformance/FORMAT.md).

A scenario's inline studio is compiled on the fly, its canned tools are served by an in-process
MCP server (faults included), its `servers:` are started as real processes, the LLM side is the
scripted model, the store is SQLite on disk; the trace is checked against the expectations.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from skillc.scenario.match import check

SCENARIO_KEYS = {"name", "config", "platform", "studio", "tools", "servers", "turns", "final"}
TURN_KEYS = {"user", "answer", "at", "restart", "model", "expect", "absent"}
START = 1_798_761_600.0  # 2027-01-01T00:00:00Z: scenarios run on a fixed, injectable clock
TOOL_TIMEOUT = 0.25  # seconds: a `fault: timeout` costs this much


class ScenarioError(Exception):
    """The scenario file itself is malformed."""


@dataclass
class ScenarioResult:
    """One scenario's verdict."""

    name: str
    path: str
    problems: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems and self.error is None


class Clock:
    """The injectable clock scenarios move with `at:`."""

    def __init__(self, start: float = START) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def load_scenario(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and shape-check a scenario file."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ScenarioError(f"{path}: cannot read: {exc}") from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a mapping")
    unknown = set(data) - SCENARIO_KEYS
    if unknown:
        raise ScenarioError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}")
    for key in ("name", "studio", "turns"):
        if key not in data:
            raise ScenarioError(f"{path}: missing {key!r}")
    if not isinstance(data["turns"], list):
        raise ScenarioError(f"{path}: turns must be a list")
    for i, turn in enumerate(data["turns"], 1):
        if not isinstance(turn, dict) or not (("user" in turn) ^ ("answer" in turn)):
            raise ScenarioError(f"{path}: turn {i} needs exactly one of user: or answer:")
        bad = set(turn) - TURN_KEYS
        if bad:
            raise ScenarioError(f"{path}: turn {i}: unknown key(s) {', '.join(sorted(bad))}")
    return data


class _Instance:
    """One runtime process as the scenario sees it: gateway, store, runtime, session."""

    def __init__(self) -> None:
        self.gateway: Any = None
        self.store: Any = None
        self.runtime: Any = None
        self.session: Any = None

    async def close(self, *, crashed: bool) -> None:
        if self.gateway is not None:
            with contextlib.suppress(Exception):
                await self.gateway.aclose()
        if self.store is not None:
            if crashed:
                self.store.db.close()  # a dead process commits nothing more
            else:
                self.store.close()


async def run_scenario(path: str | os.PathLike[str], *, trace_path: str | None = None) -> ScenarioResult:
    """Run one scenario file; never raises for a scenario's own failures."""
    try:
        data = load_scenario(path)
    except ScenarioError as exc:
        return ScenarioResult(name=str(path), path=str(path), error=str(exc))
    result = ScenarioResult(name=str(data.get("name")), path=str(path))
    with tempfile.TemporaryDirectory(prefix="skillc-scenario-") as tmp:
        try:
            await _run(data, Path(tmp), result, trace_path)
        except ScenarioError as exc:
            result.error = str(exc)
    if result.error is None:
        result.problems = check(data, result.events)
    return result


async def _run(data: dict[str, Any], tmp: Path, result: ScenarioResult, trace_path: str | None) -> None:
    from skillc.compiler.build import compile_studio
    from skillc.compiler.sources import studio_from_mapping
    from skillc.runtime.config import ConfigError, McpServerConfig, Settings
    from skillc.runtime.engine import Runtime
    from skillc.runtime.loader import load_compiled
    from skillc.runtime.mcp.gateway import GatewayConfigError, McpGateway
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.store import Store
    from skillc.runtime.trace import TraceWriter
    from skillc.scenario.canned import build_canned_server

    try:
        studio = studio_from_mapping(data["studio"], origin=result.path)
        settings = Settings.from_mapping(data.get("config") or {})
    except (ConfigError, ValueError, TypeError) as exc:
        raise ScenarioError(f"{result.path}: {exc}") from exc
    compile_studio(studio, tmp / "compiled")
    compiled = load_compiled(tmp / "compiled")
    trace = TraceWriter(trace_path)
    clock = Clock()
    model = ScriptedModel()
    platform = data.get("platform") or {}
    crashed = asyncio.Event()
    current = _Instance()

    def turn_of() -> dict[str, Any]:
        s = current.session
        if s is None:
            return {"session": "s1", "turn": 0}
        return {"session": s.id, "turn": s.session.turn, "task": s.task.id if s.task else None}

    def on_invoked(tool: str, args: dict[str, Any]) -> None:
        trace.emit("mcp.invoked", **turn_of(), tool=tool, args=args)

    try:
        canned = build_canned_server(data.get("tools") or [], on_invoked=on_invoked, on_crash=crashed.set)
    except ValueError as exc:
        raise ScenarioError(f"{result.path}: tools: {exc}") from exc
    servers: dict[str, Any] = {"scenario": canned}
    for name, spec in (data.get("servers") or {}).items():
        spec = dict(spec)
        spec["env"] = {k: str(v).replace("{tmp}", str(tmp)) for k, v in (spec.get("env") or {}).items()}
        servers[name] = McpServerConfig(**spec)

    async def open_instance() -> _Instance:
        inst = _Instance()
        inst.gateway = McpGateway(servers, timeout=TOOL_TIMEOUT, on_invoked=on_invoked)
        try:
            await inst.gateway.start()
        except GatewayConfigError as exc:
            raise ScenarioError(f"{result.path}: {exc}") from exc
        inst.store = Store(tmp / "store.sqlite")
        inst.runtime = Runtime(compiled, inst.gateway, model, inst.store, settings, clock=clock, trace=trace, seed=7)
        inst.session = await inst.runtime.open_session(platform, session_id="s1")
        return inst

    try:
        current = await open_instance()
        for number, turn in enumerate(data["turns"], 1):
            if turn.get("restart") or current.session is None:
                await current.close(crashed=False)
                current = await open_instance()
            if turn.get("at"):
                clock.now += _duration(turn["at"])
            try:
                model.load_turn(list(turn.get("model") or []))
            except Exception as exc:
                raise ScenarioError(f"{result.path}: turn {number}: {exc}") from exc
            if "user" in turn:
                job = asyncio.ensure_future(current.session.send(str(turn["user"])))
            else:
                job = asyncio.ensure_future(current.session.answer(dict(turn["answer"] or {})))
            crash_wait = asyncio.ensure_future(crashed.wait())
            await asyncio.wait({job, crash_wait}, return_when=asyncio.FIRST_COMPLETED)
            crash_wait.cancel()
            if crashed.is_set():
                crashed.clear()
                job.cancel()
                with contextlib.suppress(BaseException):
                    await job
                await current.close(crashed=True)
                current = _Instance()
            else:
                job.result()
            for entry in model.finish_turn():
                result.unused.append(f"turn {entry.turn}: unused script entry {entry.entry}")
    finally:
        await current.close(crashed=False)
        trace.close()
    result.events = trace.events


def _duration(text: Any) -> float:
    from skillc.runtime.config import parse_duration

    value = str(text).strip()
    return parse_duration(value[1:] if value.startswith("+") else value)


def run_files(paths: list[str], *, trace_path: str | None = None) -> list[ScenarioResult]:
    """Run several scenario files in order (each on its own event loop)."""
    return [asyncio.run(run_scenario(p, trace_path=trace_path)) for p in paths]


def report(result: ScenarioResult) -> str:
    """A readable verdict for one scenario."""
    if result.error:
        return f"ERROR {result.name} ({result.path})\n  {result.error}"
    head = f"{'PASS' if result.ok else 'FAIL'} {result.name} ({len(result.events)} events)"
    lines = [head]
    lines += [f"  - {p}" for p in result.problems]
    errors = [e for e in result.events if e.get("type") == "error"]
    lines += [f"  ! turn {e.get('turn')}: runtime error: {e.get('message')}" for e in errors]
    if not result.ok:
        lines += [f"  · {u}" for u in result.unused]
    return "\n".join(lines)
