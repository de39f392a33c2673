"""`skillc demo`: the product in one command, on embedded defaults.

Compiles the bundled example studio, starts the example CMS MCP server as a real process, and
plays a scripted conversation through the real runtime: a write that needs a lookup first and
then the user's approval, a fabricated id refused, a write whose answer is lost verified by the
contract's verify tool, and the replies. Every step is written to the trace.
"""
from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any, Callable

PLATFORM = {"userId": 7, "memberId": 70, "name": "alice", "organId": 9, "organName": "Acme",
            "organType": "COMPANY", "deptPath": "/1/9"}

# The LLM side of the conversation (docs/reference/scenarios.md script entries), turn by turn.
SCRIPT: list[dict[str, Any]] = [
    {"user": "Please create an article titled Spring launch",
     "model": [{"route": "editor"},
               {"call": {"tool": "cms_article_create", "args": {"title": "Spring launch", "spaceId": 5}}},
               {"call": {"tool": "cms_space_list", "args": {}}},
               {"call": {"tool": "cms_article_create", "args": {"title": "Spring launch", "spaceId": 3}}},
               {"call": {"tool": "builtin_node_approval",
                         "args": {"summary": "Create the article in space Website", "toolName": "cms_article_create"}}}]},
    {"answer": {"decision": "CONFIRM"},
     "model": [{"call": {"tool": "builtin_node_finish", "args": {"output": "Created article 17, Spring launch."}}}]},
    {"user": "Tag article 17 as featured",
     "model": [{"route": "publisher"},
               {"intent": ["cms.article.tag"]},
               {"call": {"tool": "cms_tag_add", "args": {"articleId": 71, "tag": "featured"}}},
               {"call": {"tool": "cms_tag_add", "args": {"articleId": 17, "tag": "featured"}}},
               {"call": {"tool": "builtin_node_finish", "args": {"output": "Article 17 is tagged featured."}}}]},
]

NARRATION = {
    1: "The editor asks for an article. The model guesses a space id: refused, since the contract "
       "says it must come from a lookup (EVIDENCE). After the lookup the write needs the user's approval.",
    2: "The user confirms: the write runs once, with the arguments shown.",
    3: "Tagging: the model first makes up an article id (refused: it must be the user's, a lookup's "
       "or a known entity's), then uses the user's; the tool's answer is lost (timeout), so the "
       "runtime asks the contract's verify tool whether the write took effect.",
}


def studio_dir() -> Path:
    """The bundled example studio."""
    import skillc.examples

    return Path(skillc.examples.__file__).resolve().parent / "studio"


async def play(trace_path: str, write: Callable[[str], None], *, color: bool = False, timeout: float = 1.5) -> int:
    """Run the demo conversation; returns the exit status."""
    from skillc.compiler.build import compile_studio
    from skillc.render import Renderer
    from skillc.runtime import open_runtime
    from skillc.runtime.outside.config import Config, McpConfig, McpServerConfig, Settings, audit_key
    from skillc.runtime.words.events import EventName
    from skillc.runtime.compiled.loader import load_compiled
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.telemetry.trace import TraceWriter

    renderer = Renderer(write, color=color)
    with tempfile.TemporaryDirectory(prefix="skillc-demo-") as tmp:
        write(f"compiling {studio_dir()} …")
        built = compile_studio(studio_dir(), Path(tmp) / "compiled")
        write(f"  {len(built.manifest['skills'])} skills, {len(built.rejected)} rejected, "
              f"{len(built.manifest['agents'])} agents")
        server = McpServerConfig(command=sys.executable, args=["-m", "skillc.examples.cms_server"],
                                 env={"CMS_DB": str(Path(tmp) / "cms.sqlite"), "CMS_SLOW_FIRST": "cms_tag_add",
                                      "CMS_SLOW_SECONDS": str(timeout * 2)})
        trace = TraceWriter(trace_path, keep=True, key=audit_key())
        trace.listeners.append(renderer.event)
        write("starting the example CMS MCP server (a real process over stdio) …")
        model = ScriptedModel()
        # the demo's own server must start, however loaded the machine (10 s was missed on a busy one)
        config = Config(mcp=McpConfig(timeout=timeout, connect_timeout=120))
        settings = Settings.from_mapping({"state.write-confirm-bypass-tools": ["cms_tag_add"]})
        async with open_runtime(config, studio=load_compiled(Path(tmp) / "compiled"), servers={"cms": server},
                                store=Path(tmp) / "store.sqlite", model=model, trace=trace, settings=settings,
                                on_progress=renderer.progress, seed=1) as runtime:
            if runtime.gateway.unreachable_servers:
                reason = "; ".join(runtime.gateway.unreachable_servers.values())
                write(f"error: the example CMS server did not start: {reason}")
                trace.close()
                return 1
            write(f"  {len(runtime.gateway.catalog)} tools")
            session = await runtime.open_session(PLATFORM, session_id="demo")
            for number, turn in enumerate(SCRIPT, 1):
                write("")
                for line in textwrap.wrap(NARRATION[number], width=96):
                    write(f"# {line}")
                model.load_turn(turn["model"])
                if "user" in turn:
                    await session.send(turn["user"])
                else:
                    await session.answer(turn["answer"])
                model.finish_turn()
        trace.close()
    failures = [e for e in trace.events if e["type"] == EventName.ERROR]
    write("")
    write(f"trace written to {trace_path} ({len(trace.events)} events)")
    return 1 if failures else 0


def main(trace_path: str | None = None) -> int:
    """Entry point of `skillc demo`: 0 when the conversation played without a runtime error."""
    path = trace_path or os.path.join(".skillc", "demo-trace.jsonl")
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        open(path, "a", encoding="utf-8").close()  # fail here, with one line, not mid-demo
    except OSError as exc:
        hint = "" if trace_path else " (this directory is not writable: pass --trace PATH)"
        print(f"skillc demo: error: cannot write the trace {path}: {exc.strerror or exc}{hint}", file=sys.stderr)
        return 2
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    return asyncio.run(play(path, lambda line: print(line, flush=True), color=color))
