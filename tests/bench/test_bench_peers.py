"""bench/peers (the peers mode of bench/compare.py): its table, its drivers and skillc's side of the turn.

No peer framework is installed here (the bench makes their venvs itself); what can break without
the network is checked: the result line and the ratio logic, the model double's script, that each
driver is valid Python exposing its entry points, the job list, the venv marker, and skillc's own
driver playing the turn for real (in process, and against the stdio tool server over MCP).
"""
from __future__ import annotations

import asyncio

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers.by_path import load_module

PEERS = Path(__file__).resolve().parents[2] / "bench" / "peers"
DRIVERS = ("skillc_driver", "langgraph_driver", "openai_agents_driver", "pydantic_ai_driver")


def load(name: str) -> ModuleType:
    """A module of bench/peers by path (its siblings found as the bench finds them)."""
    if str(PEERS) not in sys.path:
        sys.path.insert(0, str(PEERS))
    return load_module(PEERS / f"{name}.py", f"bench_peers_{name}", register=True)


scenario, table = load("scenario"), load("table")


def row(framework: str, mode: str, *ms: float) -> object:
    return table.Row(framework, mode, tuple(v / 1000 for v in ms))


def test_the_result_line_is_read_from_a_drivers_output() -> None:
    out = "a warning\n" + scenario.MARK + json.dumps({"median": 0.002, "samples": [0.002]}) + "\n"
    assert scenario.parse_report(out)["median"] == 0.002
    with pytest.raises(ValueError, match="PEER-RESULT"):
        scenario.parse_report("Traceback ...\n")


def test_the_model_double_asks_for_each_call_once_then_answers() -> None:
    steps = [scenario.next_step(done, 5) for done in range(7)]
    assert steps[:5] == [{"articleId": 17}, {"articleId": 18}, {"articleId": 17}, {"articleId": 18},
                         {"articleId": 17}]
    assert steps[5] is None and steps[6] is None


def test_a_row_is_the_median_of_its_rounds_and_its_ratio_is_to_skillc_in_the_same_mode() -> None:
    rows = [row("skillc", "direct", 0.5, 0.4, 3.0), row("langgraph", "direct", 4.0, 5.0, 4.5),
            row("skillc", "mcp", 1.0, 1.0, 1.0), row("pydantic-ai", "mcp", 3.0, 2.0, 9.0)]
    assert rows[0].median == pytest.approx(0.0005)
    assert table.ratio(rows[1], rows) == pytest.approx(9.0)
    assert table.ratio(rows[3], rows) == pytest.approx(3.0)
    assert table.ratio(rows[0], rows) is None
    assert table.ratio(row("langgraph", "served", 1.0), rows) is None  # no skillc row to divide by
    best = table.best_peer(rows)
    assert best is not None and best[0] == pytest.approx(3.0) and best[1] is rows[3]
    assert [(mode, round(r, 1), b.framework) for mode, r, b in table.best_by_mode(rows)] == [
        ("direct", 9.0, "langgraph"), ("mcp", 3.0, "pydantic-ai")]


def test_the_closing_line_names_the_best_peer_and_judges_the_target() -> None:
    rows = [row("skillc", "direct", 0.5), row("langgraph", "direct", 4.0), row("openai-agents", "direct", 3.1)]
    text = table.render(rows, 1, 5)
    assert "  langgraph              direct         4.000 ms  (4.000-4.000)           8.0x" in text
    assert text.splitlines()[-2:] == ["as shipped: best peer per mode: direct openai-agents 6.2x",
                                      "as shipped: skillc vs best peer per tool call: 6.2x (target ≥ 5x) MET"
                                      "  [best: openai-agents, direct]"]
    missed = table.render(rows + [row("pydantic-ai", "direct", 1.0)], 1, 5)
    assert missed.splitlines()[-1].startswith("as shipped: skillc vs best peer per tool call: 2.0x (target ≥ 5x) MISSED")
    assert table.render([row("skillc", "direct", 0.5)], 1, 5).endswith("no peer measured")


def persisted(framework: str, mode: str, persist: str, *ms: float) -> object:
    return table.Row(framework, mode, tuple(v / 1000 for v in ms), persist)


def test_the_peers_with_persistence_get_their_own_table_against_the_same_skillc_row() -> None:
    rows = [persisted("skillc", "direct", "sqlite", 1.0), persisted("skillc", "direct", "memory", 0.6),
            row("langgraph", "direct", 3.0), persisted("langgraph", "direct", "sqlite", 9.0)]
    text = table.render(rows, 1, 5)
    shipped, with_files = text.split(table.TITLES[table.PERSISTED])
    assert table.TITLES[table.SHIPPED] in shipped
    assert "skillc :memory:" in shipped and "0.6x" in shipped  # the file's share of skillc's figure
    assert "langgraph +sqlite" not in shipped and "3.0x" in shipped
    assert "skillc :memory:" not in with_files and "  skillc " in with_files
    assert "langgraph +sqlite      direct         9.000 ms" in with_files and "9.0x" in with_files
    # skillc's own :memory: row is no peer: the verdicts name LangGraph only
    assert "as shipped: skillc vs best peer per tool call: 3.0x (target ≥ 5x) MISSED  [best: langgraph, direct]" in text
    assert text.splitlines()[-1] == ("with persistence: skillc vs best peer per tool call: 9.0x (target ≥ 5x) MET"
                                     "  [best: langgraph +sqlite, direct]")


def test_the_tables_use_the_drivers_persist_words() -> None:
    assert (table.NONE, table.SQLITE, table.MEMORY) == scenario.PERSIST


def test_a_failed_measurement_is_shown_and_left_out_of_the_ratios() -> None:
    rows = [row("skillc", "mcp", 1.0, 1.2), row("pydantic-ai", "mcp"), row("langgraph", "mcp", 8.0)]
    text = table.render(rows, 2, 5)
    assert "pydantic-ai            mcp              failed" in text
    assert "7.3x  [1 of 2 rounds]" in text  # 8.0 over skillc's median of 1.0 and 1.2
    assert text.splitlines()[-1].startswith("as shipped: skillc vs best peer per tool call: 7.3x")


@pytest.mark.parametrize("name", DRIVERS)
def test_each_driver_is_valid_python_with_its_entry_points(name: str) -> None:
    source = (PEERS / f"{name}.py").read_text()
    compile(source, name, "exec")
    module = load(name)  # the frameworks are imported inside the functions, so this needs none
    assert callable(module.main) and callable(module.in_process)
    if name in ("skillc_driver", "pydantic_ai_driver"):
        assert callable(module.serve)


def test_every_framework_setup_and_mode_becomes_one_job_with_existing_scripts() -> None:
    run = load("run")
    jobs = run.jobs(list(run.DRIVERS), 5, 20, 3)
    each = [("skillc", "sqlite"), ("skillc", "memory"), ("langgraph", "none"), ("langgraph", "sqlite"),
            ("openai-agents", "none"), ("openai-agents", "sqlite"), ("pydantic-ai", "none"), ("pydantic-ai", "sqlite")]
    served = [("skillc", "sqlite"), ("skillc", "memory"), ("pydantic-ai", "none"), ("pydantic-ai", "sqlite")]
    assert [(j.framework, j.persist, j.mode) for j in jobs] == (
        [(f, p, "direct") for f, p in each] + [(f, p, "mcp") for f, p in each] + [(f, p, "served") for f, p in served])
    for job in jobs:
        assert Path(job.argv[1]).exists(), job
        assert "--calls" in job.argv and job.argv[job.argv.index("--calls") + 1] == "5"
        command = job.argv if job.mode != "served" else json.loads(job.argv[job.argv.index("--app") + 1])
        assert command[command.index("--persist") + 1] == job.persist
    assert ["--sign" in j.argv for j in jobs if j.mode == "served"] == [True, True, False, False]
    shipped = run.jobs(list(run.DRIVERS), 5, 20, 3, ["shipped"])
    assert {(j.framework, j.persist) for j in shipped} == {("skillc", "sqlite"), ("skillc", "memory"),
                                                           ("langgraph", "none"), ("openai-agents", "none"),
                                                           ("pydantic-ai", "none")}
    assert {j.persist for j in run.jobs(list(run.DRIVERS), 5, 20, 3, ["persisted"])} == {"sqlite"}


def test_pydantic_ais_message_log_keeps_each_runs_history_committed(tmp_path: Path) -> None:
    """The persisted Pydantic AI row's store: every run's `all_messages_json()` a row of its own,
    readable from another connection at once (committed, not left in a transaction)."""
    import sqlite3

    driver = load("pydantic_ai_driver")
    log = driver.MessageLog(str(tmp_path / "messages.sqlite"))

    class Result:
        def __init__(self, body: bytes) -> None:
            self.body = body

        def all_messages_json(self) -> bytes:
            return self.body

    log.save(Result(b'[{"kind":"request"}]'))
    log.save(Result(b'[{"kind":"response"}]'))
    other = sqlite3.connect(tmp_path / "messages.sqlite")
    assert other.execute("SELECT id, messages FROM conversations ORDER BY id").fetchall() == [
        ("c1", b'[{"kind":"request"}]'), ("c2", b'[{"kind":"response"}]')]
    assert driver.message_log("none") is None


def test_a_venv_made_with_other_pins_is_not_ready(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venvs = load("venvs")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert not venvs.is_ready("langgraph")
    where = tmp_path / "skillc-bench" / "peers" / "langgraph"
    where.mkdir(parents=True)
    (where / "ready").write_text("langgraph==0.0.1")
    assert not venvs.is_ready("langgraph")
    (where / "ready").write_text("\n".join(venvs.REQUIREMENTS["langgraph"]))
    assert venvs.is_ready("langgraph") and venvs.python_of("langgraph") == where / "bin" / "python"


def test_skillcs_driver_plays_the_five_call_turn_against_the_stdio_tool_server() -> None:
    """skillc's side for real, over MCP to the tool server every peer's client uses: the scripted
    turn, its tool calls counted at the MCP SDK's boundary (any other count fails the driver)."""
    server = json.dumps([sys.executable, str(PEERS / "tool_server.py")])
    done = subprocess.run([sys.executable, str(PEERS / "skillc_driver.py"), "--mode", "mcp", "--server", server,
                           "--turns", "2", "--warmup", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = scenario.parse_report(done.stdout)
    assert len(result["samples"]) == 2 and result["median"] > 0


def test_skillcs_driver_plays_the_turn_on_an_in_memory_store() -> None:
    """The `:memory:` row is the same turn on SQLite's in-memory database (the driver refuses a
    turn that made other than the scripted calls or answered other than the final text)."""
    done = subprocess.run([sys.executable, str(PEERS / "skillc_driver.py"), "--mode", "direct", "--persist", "memory",
                           "--turns", "2", "--warmup", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = scenario.parse_report(done.stdout)
    assert result["persist"] == "memory" and len(result["samples"]) == 2


@pytest.mark.parametrize("client", ["lean", "httpx"])
def test_the_served_client_plays_skillcs_app_to_the_end_of_each_run(client: str) -> None:
    """served.py's client over loopback against skillc serve's app: each run read to RUN_FINISHED
    with the scripted tool calls counted in its stream (any other count fails the client)."""
    app = json.dumps([sys.executable, str(PEERS / "skillc_driver.py"), "--mode", "serve"])
    done = subprocess.run([sys.executable, str(PEERS / "served.py"), "--app", app, "--sign", "--client", client,
                           "--turns", "2", "--warmup", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    found = scenario.parse_report(done.stdout)
    assert len(found["samples"]) == 2
    # the app's clock (its MCP tool calls and model double) is taken out of the raw client time
    assert 0 < found["median"] < found["raw"]


def test_the_app_clock_answers_its_totals_before_the_app_and_passes_everything_else() -> None:
    clock = scenario.Clock()
    clock.model, clock.tool, clock.calls = 0.25, 0.5, 5
    seen: list[str] = []

    async def app(scope: dict, receive: object, send: object) -> None:
        seen.append(scope["path"])

    async def go() -> list[dict]:
        sent: list[dict] = []

        async def send(message: dict) -> None:
            sent.append(message)

        wrapped = scenario.with_clock(app, clock)
        await wrapped({"type": "http", "path": scenario.CLOCK_PATH}, None, send)
        await wrapped({"type": "http", "path": "/agui"}, None, send)
        return sent

    sent = asyncio.run(go())
    assert seen == ["/agui"] and sent[0]["status"] == 200
    assert json.loads(sent[1]["body"]) == {"model": 0.25, "tool": 0.5, "calls": 5}


def test_a_streamed_model_doubles_time_is_the_models() -> None:
    clock = scenario.Clock()

    async def stream() -> object:
        for i in range(3):
            yield i

    async def go() -> list[int]:
        return [i async for i in clock.timed_stream(stream)()]

    assert asyncio.run(go()) == [0, 1, 2] and clock.model > 0


def test_the_raw_served_rows_are_shown_and_never_judged() -> None:
    rows = [row("skillc", "served", 1.0), row("pydantic-ai", "served", 6.0),
            row("skillc", table.RAW, 1.5), row("pydantic-ai", table.RAW, 6.0)]
    text = table.render(rows, 1, 5)
    assert "  pydantic-ai            raw            6.000 ms  (6.000-6.000)           4.0x" in text
    assert text.splitlines()[-1].startswith("as shipped: skillc vs best peer per tool call: 6.0x (target ≥ 5x) MET")
