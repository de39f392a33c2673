"""skillc's side of the peers turn: the runtime in process (direct, over MCP) or served (AG-UI).

- direct: the scenario runner's canned MCP server in process (skillc reaches every tool over
  MCP; the in-memory transport is its direct path);
- mcp: the bench's stdio tool server (`tool_server.py`), the same one the peers' MCP clients use;
- serve: `create_app` under uvicorn on 127.0.0.1:--port, the canned server in process, for
  `served.py` to drive over loopback.

The model double is the scripted model: `--calls` reads of the tool, then the builtin finish that
ends the turn with the text "read" (6 model steps, as the peers' 5 tool calls and a final text).
Tool time is the time inside the MCP SDK's `ClientSession.call_tool` (where every framework's MCP
client hands the call over; stricter than the gateway's whole call, which bench/turns.py takes
out); model time is inside the double's `complete`.
Every turn opens a new session, so a session's growth is not measured here (bench/turns.py is).
The store is a SQLite file in a temporary folder (`--persist sqlite`, the default: what a deployed
runtime does) or the same store on `:memory:` (`--persist memory`: all its work but the file's).

    python bench/peers/skillc_driver.py --mode direct|mcp [--persist sqlite|memory] [--calls 5] [--turns 20]
    python bench/peers/skillc_driver.py --mode serve --port 8123 [--persist sqlite|memory] [--calls 5]
"""
from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scenario  # noqa: E402

CONTRACT = json.dumps({"tools": {scenario.TOOL: {
    "args": {"articleId": {"sources": ["USER", "EVIDENCE"], "label": "Article"}},
    "success": {"path": "code", "op": "EQ", "value": 200},
    "extracts": [{"key": "article", "path": "data", "entity": {"type": "article", "name": "title"}}]}}})
STUDIO = {
    "agents": [{"agent_code": "reader", "agent_name": "Reader", "identity_desc": "Reads", "mission_desc": "Reads",
                "boundary_desc": "", "style_desc": "", "principle_desc": "", "status": "ACTIVE",
                "skills": ["cms.read"]}],
    "skills": [{"skill_key": "cms.read", "skill_name": "Reader", "semantic_desc": "Reads articles",
                "skill_manual": "Read.", "status": "ACTIVE", "tools": [scenario.TOOL], "contract": CONTRACT}],
}
CANNED = [{"name": scenario.TOOL, "responses": [{"json": scenario.RESULT}],
           "input_schema": {"type": "object", "properties": {"articleId": {"type": "integer"}},
                            "required": ["articleId"]}}]
SECRET = "peers-bench-secret"  # served.py signs with it; loopback only
PERSISTS = (scenario.SQLITE, scenario.MEMORY)  # --persist: the store on a file, or in memory


def store_path(tmp: Path, persist: str) -> str:
    """Where the store lives: a file in `tmp`, or SQLite's in-memory database."""
    return ":memory:" if persist == scenario.MEMORY else str(tmp / "store.sqlite")


def script(calls: int) -> list[dict[str, Any]]:
    """The scripted model's entries for one turn: `calls` reads, then the finish."""
    return [{"call": {"tool": scenario.TOOL, "args": scenario.call_args(i)}} for i in range(calls)] + [
        {"call": {"tool": "builtin_node_finish", "args": {"output": scenario.FINAL}}}]


def compiled(tmp: Path) -> Path:
    """The one-skill studio, compiled into `tmp` by a child interpreter: the compiler's modules and
    grammar would otherwise stay in this process's heap, and every garbage collection of the
    measured turns would walk them (a deployed runtime loads compiled output, never the compiler)."""
    code = ("import json, sys; from pathlib import Path; from skillc.compiler.build import compile_studio; "
            "from skillc.compiler.sources import studio_from_mapping; "
            "compile_studio(studio_from_mapping(json.loads(sys.argv[1]), origin='bench'), Path(sys.argv[2]))")
    subprocess.run([sys.executable, "-c", code, json.dumps(STUDIO), str(tmp / "compiled")], check=True, timeout=300)
    return tmp / "compiled"


def servers(mode: str, server_cmd: list[str] | None) -> dict[str, Any]:
    """The gateway's one server: canned in process (direct, serve) or the stdio tool server (mcp)."""
    from skillc.runtime.outside.config import McpServerConfig
    from skillc.scenario.canned import build_canned_server

    if mode == "mcp":
        assert server_cmd, "--server is required with --mode mcp"
        return {"tools": McpServerConfig(command=server_cmd[0], args=tuple(server_cmd[1:]))}
    return {"tools": build_canned_server(CANNED, on_invoked=lambda t, a: None, on_crash=lambda: None)}


async def in_process(mode: str, calls: int, turns: int, warmup: int, server_cmd: list[str] | None,
                     persist: str = scenario.SQLITE) -> list[float]:
    """Overhead per tool call of `turns` new-session turns in process."""
    import mcp

    from skillc.runtime.outside.config import Settings
    from skillc.runtime.compiled.loader import load_compiled
    from skillc.runtime.mcp.gateway import McpGateway
    from skillc.runtime.model.scripted import ScriptedModel
    from skillc.runtime.session import Runtime
    from skillc.runtime.store import Store
    from skillc.runtime.telemetry.trace import TraceWriter

    clock = scenario.Clock()
    clock.instrument_mcp(mcp.ClientSession)
    with tempfile.TemporaryDirectory() as tmp:
        studio = load_compiled(compiled(Path(tmp)))
        model = ScriptedModel()
        model.complete = clock.timed_model_async(model.complete)  # type: ignore[method-assign]
        store = Store(store_path(Path(tmp), persist))
        async with McpGateway(servers(mode, server_cmd), timeout=60) as gateway:
            runtime = Runtime(studio, gateway, model, store, Settings.from_mapping({}), trace=TraceWriter(), seed=1)
            count = iter(range(10**9))

            async def turn() -> None:
                session = await runtime.open_session({"userId": 7}, session_id=f"s{next(count)}")
                model.load_turn(script(calls))
                reply = await session.send(scenario.PROMPT)
                model.requests.clear()
                if reply.text != scenario.FINAL:
                    raise SystemExit(f"unexpected reply {reply.text!r}")

            samples = await scenario.measure(turn, clock, calls, turns, warmup)
        store.close()
    return samples


def serve(port: int, calls: int, persist: str = scenario.SQLITE) -> None:
    """`skillc serve`'s app on 127.0.0.1:port: a new session per thread, its model double stateless."""
    import uvicorn

    from skillc.runtime.outside.config import parse_config
    from skillc.runtime.model import ModelDouble, ModelResponse, ToolCall
    from skillc.runtime.server import create_app
    from skillc.runtime.server.options import ServeOptions

    import mcp

    clock = scenario.Clock()  # the model's and the tools' time, which served.py takes out
    clock.instrument_mcp(mcp.ClientSession)

    def answer(request: Any) -> Any:
        # Which step this is follows from the session's own messages, so concurrent or
        # consecutive threads never share a script.
        done = sum(1 for m in request.messages if m.get("role") == "tool")
        if done < calls:
            return ModelResponse(tool_calls=[ToolCall(f"c{done}", scenario.TOOL, json.dumps(scenario.call_args(done)))])
        return ModelResponse(tool_calls=[ToolCall(f"c{done}", "builtin_node_finish",
                                                  json.dumps({"output": scenario.FINAL}))])

    tmp = Path(tempfile.mkdtemp(prefix="skillc-peers-serve-"))
    atexit.register(shutil.rmtree, tmp, True)  # uvicorn returns on the SIGTERM served.py sends
    source = compiled(tmp)
    config = parse_config(f"[studio]\nsource = {str(source)!r}\n[store]\npath = {store_path(tmp, persist)!r}\n",
                          tmp / "skillc.toml")
    app = create_app(config=config, model=ModelDouble(clock.timed_model(answer)), servers=servers("serve", None),
                     options=ServeOptions(secret=SECRET, studio_refresh=3600.0, trace_dir=str(tmp / "traces")))
    app = scenario.with_clock(app, clock)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def main() -> int:
    """Run one measurement (or serve) as the command line says."""
    return scenario.run_driver(__doc__, in_process, serve, PERSISTS)


if __name__ == "__main__":
    sys.exit(main())
