"""`skillc scenario run`: scripted conversations through the real runtime (docs/reference/scenarios.md).

A scenario's inline studio is compiled on the fly, its canned tools are served by an in-process
MCP server (faults included), its `servers:` are started as real processes, the LLM side is the
scripted model, the store is SQLite on disk; the trace is checked against the expectations.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillc.runtime.words.event_types import TraceEvent
from skillc.runtime.words.events import EventName
from skillc.runtime.text.idtext import ascii_int
from skillc.scenario.load import Located, ScenarioError, duration, load_scenario, read_scenario
from skillc.scenario.match import check
from skillc.scenario.report import report

if TYPE_CHECKING:
    from skillc.runtime.telemetry.trace import TraceWriter

__all__ = ["Clock", "ScenarioError", "ScenarioResult", "load_scenario", "report", "run_files", "run_scenario"]

START = 1_798_761_600.0  # 2027-01-01T00:00:00Z: scenarios run on a fixed, injectable clock
# seconds: a `fault: timeout` costs this much; an ordinary in-process call answers in about a
# millisecond, but a loaded 2-core CI machine has stalled one past 0.25 s, failing a scenario.
TOOL_TIMEOUT = 1.0


@dataclass
class ScenarioResult:
    """One scenario's verdict: `error` when the file could not be run (bad input), `crash` when
    the runtime itself raised (a bug: the scenario fails), else the unmet expectations."""

    name: str
    path: str
    problems: list[str] = field(default_factory=list)
    unused: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    diagnostics: list[Any] = field(default_factory=list)  # the studio's, as `skillc check` finds them
    replies: list[str] = field(default_factory=list)  # "turn N: <the reply>", one per turn played
    events: list[TraceEvent] = field(default_factory=list)
    error: str | None = None
    crash: str | None = None

    @property
    def ok(self) -> bool:
        """Every expectation holds and the scenario ran to its end."""
        return not self.problems and self.error is None and self.crash is None


class Clock:
    """The injectable clock scenarios move with `at:`."""

    def __init__(self, start: float = START) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


class _Instance:
    """One runtime process as the scenario sees it: gateway, store, runtime, session."""

    def __init__(self) -> None:
        self.gateway: Any = None
        self.store: Any = None
        self.runtime: Any = None
        self.session: Any = None
        self.opened = contextlib.AsyncExitStack()  # what open_runtime opened (the gateway)

    def kill_store(self) -> None:
        """What a dying process does to its store: nothing more is committed (SQLite rolls back
        an open transaction when the connection goes away)."""
        if self.store is not None:
            with contextlib.suppress(Exception):
                self.store.db.close()
            self.store = None

    async def close(self) -> None:
        """An orderly shutdown: connections closed, the store committed and closed."""
        if self.gateway is not None:
            with contextlib.suppress(Exception):
                await self.opened.aclose()
            self.gateway = None
        if self.store is not None:
            self.store.close()
            self.store = None


async def run_scenario(path: str | os.PathLike[str], *, trace_path: str | None = None,
                       telemetry: Any = None) -> ScenarioResult:
    """Run one scenario file. Never raises for the scenario's own problems: a malformed file sets
    `error`, an exception out of the runtime sets `crash`, unmet expectations fill `problems`.
    `telemetry` (a `Telemetry`) is installed on each runtime the scenario opens (else the
    environment chooses, as for `open_runtime`)."""
    try:
        data, doc = read_scenario(path)
    except ScenarioError as exc:
        return ScenarioResult(name=str(path), path=str(path), error=str(exc))
    result = ScenarioResult(name=str(data["name"]), path=str(path))
    with tempfile.TemporaryDirectory(prefix="skillc-scenario-") as tmp:
        try:
            await _run(data, doc, Path(tmp), result, trace_path, telemetry)
        except ScenarioError as exc:
            result.error = str(exc)
        except Exception as exc:  # a runtime bug must not hide the other scenarios' verdicts
            result.crash = _where(exc)
    if result.error is None:
        result.problems = check(data, result.events)
    return result


def _where(exc: BaseException) -> str:
    """`TypeError: … (at runtime/call/chain.py:123 in step)`: the innermost frame, for a bug report."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    at = ""
    if frames:
        last = frames[-1]
        at = f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"
    return f"{type(exc).__name__}: {exc}{at}"


def _inline_studio_error(doc: Located, path: str, exc: Exception) -> Exception:
    """An inline studio's problem, pointed at its line (`studio.skills[0].tools: …`)."""
    message = str(exc).removeprefix(f"{path}: ")
    found = re.match(r"studio((?:\.[\w-]+|\[\d+\])*)", message)  # e.g. studio.skills[0].tools
    parts = re.findall(r"[\w-]+", found.group(1)) if found else []
    place = ("studio",) + tuple(p if ascii_int(p) is None else ascii_int(p) for p in parts)
    return doc.fail(place, message.removeprefix("studio.") if message.startswith("studio.") else message)


async def _run(data: dict[str, Any], doc: Located, tmp: Path, result: ScenarioResult, trace_path: str | None,
               telemetry: Any = None) -> None:
    """Read the scenario's studio, config and servers, compile the studio, then play the turns."""
    from skillc.compiler.build import compile_studio
    from skillc.runtime.compiled.loader import load_compiled

    from skillc.compiler.frontend import check_studio

    studio = _read_studio(data, doc, result.path)
    settings, servers = _read_setup(data, doc, tmp)
    # what `skillc check` would say: a rejected skill or a misspelled rule explains a failure, and
    # a warning on a passing run is still worth reading
    result.diagnostics = [d for d in check_studio(studio).diagnostics if d.severity != "note"]
    compile_studio(studio, tmp / "compiled")
    play = _Play(data, doc, tmp, result, compiled=load_compiled(tmp / "compiled"), settings=settings,
                 servers=servers, trace=_open_trace(trace_path), telemetry=telemetry)
    play.serve_canned_tools()
    try:
        for number, turn in enumerate(data["turns"], 1):
            await play.turn(number, turn)
    finally:
        await play.close()


def _read_studio(data: dict[str, Any], doc: Located, path: str) -> Any:
    """The scenario's studio: inline, or a studio directory or SQLite file beside the scenario."""
    from skillc.compiler.sources import SourceError, load_studio, studio_from_mapping

    try:
        if isinstance(data["studio"], str):
            return load_studio(Path(path).resolve().parent / data["studio"])
        return studio_from_mapping(data["studio"], origin=path)
    except SourceError as exc:
        if isinstance(data["studio"], str):
            raise doc.fail(("studio",), str(exc)) from None
        raise _inline_studio_error(doc, path, exc) from None
    except (ValueError, TypeError) as exc:
        raise _inline_studio_error(doc, path, exc) from None


def _read_setup(data: dict[str, Any], doc: Located, tmp: Path) -> tuple[Any, dict[str, Any]]:
    """The scenario's runtime settings (`config:`) and MCP servers (`servers:`), checked."""
    from skillc.runtime.outside.config import McpServerConfig, Settings

    try:
        settings = Settings.from_mapping(data.get("config") or {})
    except (ValueError, TypeError) as exc:
        raise doc.fail(("config",), str(exc)) from None
    servers: dict[str, Any] = {}
    for name, spec in (data.get("servers") or {}).items():
        try:
            servers[str(name)] = McpServerConfig(**spec).with_tmp(tmp)
        except (ValueError, TypeError) as exc:
            raise doc.fail(("servers", name), _first_line(exc)) from None
    return settings, servers


def _open_trace(trace_path: str | None) -> TraceWriter:
    """The trace the expectations are checked against (kept in memory; also written to --trace)."""
    from skillc.runtime.outside.config import audit_key
    from skillc.runtime.telemetry.trace import TraceWriter

    try:
        return TraceWriter(trace_path, keep=True, key=audit_key())
    except OSError as exc:
        raise ScenarioError(f"--trace {trace_path}: cannot write: {exc.strerror or exc}") from None


class _Play:
    """A scenario being played: the runtime instance of the moment (reopened on a restart or after
    a crash), the scripted model, the clock and the canned server's crash signal."""

    def __init__(self, data: dict[str, Any], doc: Located, tmp: Path, result: ScenarioResult, *,
                 compiled: Any, settings: Any, servers: dict[str, Any], trace: TraceWriter, telemetry: Any = None) -> None:
        from skillc.runtime.model.scripted import ScriptedModel

        self.data, self.doc, self.tmp, self.result = data, doc, tmp, result
        self.compiled, self.settings, self.servers, self.trace = compiled, settings, servers, trace
        self.telemetry = telemetry
        self.clock = Clock()
        self.model = ScriptedModel()
        self.platform = data.get("platform") or {}
        self.crashed = asyncio.Event()
        self.current = _Instance()

    def on_invoked(self, tool: str, args: dict[str, Any]) -> None:
        """The canned server reports its own invocations; they are stamped like every other event
        of the session (real servers' are reported by the runtime's own MCP client hook)."""
        if self.current.session is not None:
            self.current.session.env.invoked(tool, args)
        else:
            self.trace.emit({"type": EventName.MCP_INVOKED, "tool": tool, "args": args}, session="s1", turn=0)

    def serve_canned_tools(self) -> None:
        """Add the in-process server of the scenario's `tools:` (faults included)."""
        from skillc.scenario.canned import build_canned_server

        try:
            self.servers["scenario"] = build_canned_server(self.data.get("tools") or [], on_invoked=self.on_invoked,
                                                           on_crash=self.crashed.set)
        except ValueError as exc:
            self.trace.close()
            raise self.doc.fail(("tools", getattr(exc, "index", None)), str(exc)) from None

    async def open_instance(self) -> _Instance:
        """A fresh runtime process over the scenario's store, with session s1 open."""
        from skillc.runtime import open_runtime
        from skillc.runtime.outside.config import Config, McpConfig
        from skillc.runtime.mcp.gateway import GatewayConfigError
        from skillc.runtime.store import Store

        inst = _Instance()
        # The store stays the runner's (a crash kills it without a commit); open_runtime starts
        # the MCP servers and stops them when the instance closes.
        inst.store = Store(self.tmp / "store.sqlite")
        try:
            inst.runtime = await inst.opened.enter_async_context(open_runtime(
                Config(mcp=McpConfig(timeout=TOOL_TIMEOUT)), studio=self.compiled, servers=self.servers,
                model=self.model, store=inst.store, trace=self.trace, settings=self.settings, clock=self.clock,
                seed=7, strict=True, telemetry=self.telemetry))
        except GatewayConfigError as exc:
            inst.store.close()
            raise self.doc.fail(("servers",), str(exc)) from None
        inst.gateway = inst.runtime.gateway
        for name, reason in inst.gateway.unreachable_servers.items():
            note = f"server {name} did not start: {reason}"
            if note not in self.result.notes:
                self.result.notes.append(note)
        inst.session = await inst.runtime.open_session(self.platform, session_id="s1")
        return inst

    async def turn(self, number: int, turn: dict[str, Any]) -> None:
        """Play one turn: reopen if asked (or after a crash), move the clock, send, watch for a crash."""
        if turn.get("restart") or self.current.session is None:
            # A restart (or the turn after a crash) reopens everything from the store.
            if number > 1 and not turn.get("restart"):
                self.result.notes.append(f"turn {number}: the runtime had crashed; reopened from the store "
                                         "(restart: true implied)")
            await self.current.close()
            self.current = await self.open_instance()
        if turn.get("at"):
            self.clock.now += duration(turn["at"])
        self.model.load_turn(list(turn.get("model") or []))  # entries were checked at load
        if "user" in turn:
            job = asyncio.ensure_future(self.current.session.send(str(turn["user"])))
        else:
            job = asyncio.ensure_future(self.current.session.answer(dict(turn["answer"])))
        crash_wait = asyncio.ensure_future(self.crashed.wait())
        await asyncio.wait({job, crash_wait}, return_when=asyncio.FIRST_COMPLETED)
        crash_wait.cancel()
        if self.crashed.is_set():
            await self._die(job)
        else:
            self.result.replies.append(f"turn {number}: {job.result().text}")
        for entry in self.model.finish_turn():
            self.result.unused.append(f"turn {entry.turn}: script entry {entry.position} unused: {_show(entry.entry)}")

    async def _die(self, job: asyncio.Future[Any]) -> None:
        """The process dies: its store first (no commit, no cleanup), then whatever was running is
        dropped; the connections go away as a dead process's would."""
        self.crashed.clear()
        self.current.kill_store()
        job.cancel()
        with contextlib.suppress(BaseException):
            await job
        if self.current.gateway is not None:
            with contextlib.suppress(Exception):
                await self.current.gateway.aclose()
        self.current = _Instance()

    async def close(self) -> None:
        """Shut the instance down, close the trace and hand its events to the result."""
        try:
            await self.current.close()
        finally:
            self.trace.close()
            self.result.events = self.trace.events


def _first_line(exc: BaseException) -> str:
    """pydantic's multi-line messages, flattened to one readable line."""
    lines = [re.sub(r"\s*\[type=.*$", "", line.strip()).removeprefix("Value error, ")
             for line in str(exc).splitlines() if line.strip() and not line.strip().startswith("For further")]
    return "; ".join(lines[1:] if len(lines) > 1 and "validation error" in lines[0] else lines)


def _show(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def run_files(paths: list[str], *, trace_path: str | None = None,
              on_result: Any = None) -> list[ScenarioResult]:
    """Run several scenario files in order, each on its own event loop; `on_result(result)` is
    called as each one finishes (progress for long runs)."""
    results = []
    for p in paths:
        result = asyncio.run(run_scenario(p, trace_path=trace_path))
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results
