"""docs/ARCHITECTURE.md's "One tool call": a business call is followed from the model's output
to the trace through at most five runtime files, in an order in which no call goes back.

Scripted calls (a read whose answer is extracted, a write that is pre-registered, settled and
audited, both through a gateway that reports `mcp.invoked` back to the session) are watched with
`sys.setprofile` while `node.dispatch` hands each on: every function of skillc/runtime entered,
with the nearest frame of a walk file below it on the stack. The doc's lists are read from the
doc itself, so the doc and this test cannot drift apart. A leaf is looked through: what it calls
counts as a call of the walk file below it. Then, for each call:

- every runtime file entered is a walk file or a leaf;
- the walk files entered are the doc's (the write enters all of them), at most five;
- every call from one walk file into another goes forward in the doc's order, and each walk file
  calls the next one (so that order is the only one in which no call goes back);
- the node hands the call off once (its one call into another walk file is `chain.run_call`) and
  the stack when the trace writes the `tool.call` event is node -> chain -> turn_env -> trace.
"""
from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from helpers.node_harness import FakeGateway, Harness, PLATFORM, agent, skill, step

import skillc.runtime
from skillc.runtime.loop import node as node_module
from skillc.runtime.mcp.result import CallOutcome
from skillc.runtime.telemetry.trace import TraceWriter

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = str(Path(skillc.runtime.__file__).resolve().parent) + "/"
DISPATCH = node_module.dispatch.__code__  # the call starts when the node hands on the model's tool call
SECTION = "## One tool call, from the model's output to the trace"

CONTRACT = """{ "target": "page_save", "tools": {
  "page_get": { "args": { "slug": { "sources": ["USER", "MODEL"] } },
                "success": { "path": "code", "op": "EQ", "value": 0 },
                "extracts": [ { "key": "page", "path": "data", "entity": { "type": "page", "name": "title" } } ] },
  "page_save": { "sideEffect": "WRITE", "confirm": false, "idempotencyKey": ["slug"],
                 "args": { "slug": { "sources": ["USER", "EVIDENCE"] }, "owner": { "from": "platform.userId" } },
                 "success": { "path": "code", "op": "EQ", "value": 0 } } } }"""
PAGE = {"code": 0, "data": {"slug": "home", "title": "Home"}}


def _doc_lists() -> tuple[list[str], list[str]]:
    """The section's `walk:` files in order and its `leaves:` (files and folders)."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text[text.index(SECTION):]
    section = section[:section.index("\n## ", len(SECTION))]
    walk = re.search(r"^- walk: (.*)$", section, re.M)
    leaves = re.search(r"^- leaves: (.*?)(?=\n\n|\n- )", section, re.M | re.S)
    assert walk and leaves, "the section lists its walk and its leaves"
    return re.findall(r"`([\w/]+\.py)`", walk.group(1)), re.findall(r"`([\w/]+(?:\.py|/))`", leaves.group(1))


WALK, LEAVES = _doc_lists()


def _is_leaf(rel: str) -> bool:
    return any(rel == leaf or (leaf.endswith("/") and rel.startswith(leaf)) for leaf in LEAVES)


class Reporting(FakeGateway):
    """A gateway that leaves `mcp.invoked` to the runtime: each call reports back to the session."""

    on_invoked = None

    async def call(self, tool: str, args: dict[str, Any], *, timeout: float | None = None,  # type: ignore[override]
                   on_invoked: Any = None) -> CallOutcome:
        if on_invoked is not None:
            on_invoked(tool, args)
        return await super().call(tool, args, timeout=timeout)


class Watch:
    """What one call entered: runtime files, calls between walk files, the stack of each trace write."""

    def __init__(self) -> None:
        self.on = False
        self.seen: dict[int, FrameType] = {}  # frames already entered: a later "call" is a resumption
        self.files: set[str] = set()
        self.edges: list[tuple[str, str, str]] = []  # (caller walk file, callee walk file, function)
        self.writes: list[tuple[str, list[str]]] = []  # (event type, walk files on the stack)

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self.on or event != "call" or id(frame) in self.seen:
            return
        rel = _rel(frame)
        if rel is None or not _within_dispatch(frame):  # an outer frame resumed, or another task
            return
        self.seen[id(frame)] = frame  # kept alive for the call, so an id is not reused meanwhile
        self.files.add(rel)
        if _is_leaf(rel):
            return
        stack = _walk_stack(frame)
        caller = _walk_stack(frame.f_back)[-1:]  # the walk file below this frame: a leaf's calls are its caller's
        if caller and caller[0] != rel:
            self.edges.append((caller[0], rel, frame.f_code.co_name))
        if rel == "telemetry/trace.py" and frame.f_code.co_name == "emit":
            self.writes.append((frame.f_locals["event"]["type"], stack))


def _rel(frame: FrameType) -> str | None:
    name = frame.f_code.co_filename
    return name[len(RUNTIME):] if name.startswith(RUNTIME) else None


def _within_dispatch(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code is DISPATCH:
            return True
        frame = frame.f_back
    return False


def _walk_stack(frame: FrameType | None) -> list[str]:
    """The walk files on the stack from node.dispatch up, each run of frames of one file as one."""
    files: list[str] = []
    while frame is not None:
        rel = _rel(frame)
        if rel is not None and not _is_leaf(rel) and (not files or files[-1] != rel):
            files.append(rel)
        if frame.f_code is DISPATCH:
            break
        frame = frame.f_back
    return files[::-1]


def _watch_calls(tmp_path: Path) -> dict[str, Watch]:
    """Each business call of one scripted turn, watched while node.dispatch hands it on."""
    h = Harness(tmp_path, {"agents": [agent("a", ["p.pages"])], "skills": [skill("p.pages", ["page_get", "page_save"],
                                                                                 CONTRACT)]},
                {}, config={"state.write-confirm-bypass-tools": ["page_save"]})
    h.gateway = h.runtime.gateway = Reporting({"page_get": {"responses": [PAGE]}, "page_save": {"responses": [{"code": 0}]}})
    h.runtime.reports_invocations = True
    h.runtime.trace = TraceWriter(keep=True)
    watches: dict[str, Watch] = {}
    real = node_module.dispatch

    async def watched(env: Any, node: Any, name: str, raw: Any) -> Any:
        if name.startswith("builtin_"):
            return await real(env, node, name, raw)
        watch = watches[name] = Watch()
        watch.on = True
        try:
            return await real(env, node, name, raw)
        finally:
            watch.on = False
            watch.seen.clear()

    async def turn() -> None:
        s = await h.runtime.open_session(PLATFORM, session_id="s1")
        h.script.add([step(("page_get", {"slug": "home"})), step(("page_save", {"slug": "home"})),
                      step(("builtin_node_finish", {"output": "saved"}))])
        profile = lambda frame, event, arg: [w.profile(frame, event, arg) for w in watches.values() if w.on]  # noqa: E731
        sys.setprofile(profile)
        try:
            reply = await s.send("Save the page home")
        finally:
            sys.setprofile(None)
        assert reply.text == "saved", reply

    mp = pytest.MonkeyPatch()
    mp.setattr(node_module, "dispatch", watched)
    try:
        asyncio.run(turn())
    finally:
        mp.undo()
    types = [e["type"] for e in h.runtime.trace.events]
    assert "mcp.invoked" in types and "write.settled" in types and "audit.settlement" in types, types
    assert set(watches) == {"page_get", "page_save"}
    return watches


@pytest.fixture(scope="module")
def watches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Watch]:
    return _watch_calls(tmp_path_factory.mktemp("walk"))


def test_the_doc_names_at_most_five_walk_files_that_exist() -> None:
    assert 1 < len(WALK) <= 5 and len(set(WALK)) == len(WALK), WALK
    missing = [f for f in WALK + LEAVES if not (Path(RUNTIME) / f).exists()]
    assert not missing, f"the doc names runtime files or folders that do not exist: {missing}"
    assert not [f for f in WALK if _is_leaf(f)], "a walk file is not a leaf"


@pytest.mark.parametrize("tool", ["page_get", "page_save"])
def test_a_call_enters_only_the_walk_files_and_the_leaves(watches: dict[str, Watch], tool: str) -> None:
    watch = watches[tool]
    stray = sorted(f for f in watch.files if f not in WALK and not _is_leaf(f))
    assert not stray, f"{tool} entered runtime files the doc names neither as walk files nor as leaves: {stray}"
    entered = [f for f in WALK if f in watch.files]
    assert entered == WALK if tool == "page_save" else set(entered) <= set(WALK), entered


@pytest.mark.parametrize("tool", ["page_get", "page_save"])
def test_no_call_goes_back_to_a_file_already_passed(watches: dict[str, Watch], tool: str) -> None:
    back = sorted({f"{a} -> {b} ({fn})" for a, b, fn in watches[tool].edges if WALK.index(b) < WALK.index(a)})
    assert not back, f"{tool}: calls back into a walk file already passed: {back}"


def test_each_walk_file_calls_the_next_so_the_order_is_the_only_one(watches: dict[str, Watch]) -> None:
    pairs = {(a, b) for a, b, _ in watches["page_save"].edges}
    gaps = [f"{a} -> {b}" for a, b in zip(WALK, WALK[1:]) if (a, b) not in pairs]
    assert not gaps, f"the walk's order is not forced: no call {gaps}"


@pytest.mark.parametrize("tool", ["page_get", "page_save"])
def test_the_node_hands_the_call_off_once_and_the_trace_is_written_inside_it(watches: dict[str, Watch],
                                                                             tool: str) -> None:
    watch = watches[tool]
    handoffs = [(b, fn) for a, b, fn in watch.edges if a == "loop/node.py"]
    assert handoffs == [("call/chain.py", "run_call")], f"{tool}: the node's calls into other walk files: {handoffs}"
    stacks = [stack for kind, stack in watch.writes if kind == "tool.call"]
    assert stacks == [["loop/node.py", "call/chain.py", "turn_env.py", "telemetry/trace.py"]], stacks
