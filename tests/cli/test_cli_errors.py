"""The `skillc` command line as a person meets it: help that teaches, one-line errors with the
problem and where, exit statuses as documented, progress on long work, never a traceback."""
from __future__ import annotations

import builtins
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillc.main import COMMANDS, build_parser
from skillc.main import run as skillc

ROOT = Path(__file__).resolve().parents[2]
STUDIO = ROOT / "examples" / "studio"


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run in-process; no traceback, and no internal error, may reach the person."""
    status = skillc(args)
    out = capsys.readouterr()
    for text in (out.out, out.err):
        assert "Traceback" not in text and "internal error:" not in text, text
    return status, out.out, out.err


# ---------------------------------------------------------------- help


def test_no_arguments_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run([], capsys)
    assert status == 2
    assert "usage: skillc" in err and "skillc demo" in err and "exit status" in err
    for name in COMMANDS:
        assert name in err


@pytest.mark.parametrize("argv", [[c] for c in COMMANDS if c != "scenario"] + [["scenario"], ["scenario", "run"]])
def test_every_command_help_teaches(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args([*argv, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "usage: skillc " + " ".join(argv) in text
    assert "examples:" in text, f"{argv}: no examples"
    assert "exit status" in text, f"{argv}: no exit statuses"
    assert len(text.splitlines()) > 8  # a description, not just the option list


def test_unknown_command_and_option_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["frobnicate"], ["check", "--nope"], ["scenario"], ["scenario", "run"], ["graph"]):
        with pytest.raises(SystemExit) as done:
            skillc(argv)
        assert done.value.code == 2, argv
        assert "error:" in capsys.readouterr().err


# ---------------------------------------------------------------- unreadable input


@pytest.mark.parametrize("argv", [
    ["check", "{missing}"], ["compile", "{missing}", "-o", "{tmp}/out"], ["graph", "editor", "{missing}"],
    ["explain", "cms.article.lifecycle", "{missing}"], ["check", "{tmp}"], ["check", "{garbage}"],
    ["compile", "{garbage}", "-o", "{tmp}/out"],
])
def test_unreadable_sources_are_one_line_errors(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    garbage = tmp_path / "studio.sqlite"
    garbage.write_text("not a database")
    args = [a.format(missing=tmp_path / "nope", tmp=tmp_path, garbage=garbage) for a in argv]
    status, out, err = run(args, capsys)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"skillc {argv[0]}: error: "), err
    assert str(tmp_path) in lines[0]


def test_unknown_skill_and_agent(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(["explain", "no.such.skill", str(STUDIO)], capsys)
    assert status == 2 and "no skill 'no.such.skill'" in err
    status, _, err = run(["graph", "nobody", str(STUDIO)], capsys)
    assert status == 2 and "no agent 'nobody'" in err


def test_studio_commands_work_outside_a_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # no ./examples/studio here: the bundled example is used
    status, out, _ = run(["check"], capsys)
    assert status == 0 and "11 loaded" in out
    status, out, _ = run(["explain", "cms.article.tag"], capsys)
    assert status == 0 and "cms_tag_add" in out


def test_compile_into_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out"
    target.write_text("")
    status, _, err = run(["compile", str(STUDIO), "-o", str(target)], capsys)
    assert status == 2 and "not a directory" in err


def test_compile_shows_progress_for_large_studios(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    studio = tmp_path / "studio"
    shutil.copytree(STUDIO, studio)
    skills = sorted(p.name for p in (studio / "skills").iterdir())
    for i in range(9):  # 11 skills * 10 = 110 >= the progress threshold
        for key in skills:
            shutil.copytree(studio / "skills" / key, studio / "skills" / f"{key}.copy{i}")
    status, _, err = run(["compile", str(studio), "-o", str(tmp_path / "out"), "-q"], capsys)
    assert status == 0, err
    progress = [line for line in err.splitlines() if line.startswith("[")]
    assert progress and progress[-1] == "[110/110] skills compiled", err
    assert len(progress) >= 5  # a line every tenth, not one at the end


# ---------------------------------------------------------------- interrupts and bugs


def test_keyboard_interrupt_exits_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import skillc.commands.schema as schema

    def interrupted(args: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(schema, "run", interrupted)
    status, _, err = run(["schema"], capsys)
    assert status == 130 and "interrupted" in err


def test_an_internal_error_is_one_line_with_the_details_in_a_file(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import skillc.commands.schema as schema

    def broken(args: Any) -> int:
        raise ZeroDivisionError("something\nbroke")

    monkeypatch.setattr(schema, "run", broken)
    monkeypatch.delenv("SKILLC_DEBUG", raising=False)
    assert skillc(["schema"]) == 70
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "skillc schema: internal error: ZeroDivisionError: something broke" in err
    details = Path(err.split("details in ")[1].split(";")[0])
    try:
        assert "Traceback" in details.read_text() and "ZeroDivisionError" in details.read_text()
    finally:
        details.unlink()


def test_schema_to_an_unwritable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(["schema", "-o", str(tmp_path / "no" / "schema.json")], capsys)
    assert status == 2 and "skillc schema: error:" in err


# ---------------------------------------------------------------- scenario, demo, chat


def test_scenario_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(["scenario", "run", str(tmp_path / "missing.yaml")], capsys)
    assert status == 2 and f"{tmp_path / 'missing.yaml'}: no such file" in out


def test_demo_with_an_unwritable_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    status, _, err = run(["demo", "--trace", str(blocker / "trace.jsonl")], capsys)
    assert status == 2 and "skillc demo: error: cannot write the trace" in err


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "skillc.toml"
    path.write_text(f"""
[studio]
source = {json.dumps(str(STUDIO))}
[store]
path = {json.dumps(str(tmp_path / "store.sqlite"))}
[model]
base_url = "http://127.0.0.1:9/v1"
model = "nobody"
max_retries = 0
timeout = 5
{extra}""")
    return path


@pytest.mark.parametrize("case,message", [
    ("missing", "no config file 'nope.toml' in"),
    ("bad-toml", "invalid TOML"),
    ("no-studio", "studio:"),
    ("unknown-session", "no session 'nope'"),
    ("bad-platform", "--platform takes key=value"),
    ("bad-trace", "--trace"),
])
def test_chat_start_up_errors(case: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path)
    argv = ["chat", "--config", str(config)]
    if case == "missing":
        argv = ["chat", "--config", str(tmp_path / "nope.toml")]
    elif case == "bad-toml":
        config.write_text("[model\nbase_url = ")
    elif case == "no-studio":
        config.write_text(config.read_text().replace(str(STUDIO), str(tmp_path / "no-studio")))
    elif case == "unknown-session":
        argv += ["--session", "nope"]
    elif case == "bad-platform":
        argv += ["--platform", "userId"]
    elif case == "bad-trace":
        argv += ["--trace", str(tmp_path / "no" / "t.jsonl")]
    status, _, err = run(argv, capsys)
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skillc chat: error:") and message in lines[0], err


def test_chat_with_an_unreachable_model_says_so_and_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    typed = iter(["/help", "/session", "/nope", "hello"])

    def fake_input(prompt: str) -> str:
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr(builtins, "input", fake_input)
    status, out, _ = run(["chat", "--config", str(_config(tmp_path)), "--platform", "userId=7"], capsys)
    assert status == 0, out
    session = out.split("session ", 1)[1].split(" ", 1)[0]
    assert "answer y (confirm)" in out  # /help
    assert f"\n{session}\n" in out  # /session
    assert "unknown command /nope" in out
    assert "could not talk to http://127.0.0.1:9/v1" in out  # the model is unreachable: said, not raised
    assert f"bye (session {session})" in out


def test_a_real_process_prints_no_traceback(tmp_path: Path) -> None:
    for argv in (["check", str(tmp_path / "nope")], ["chat", "--config", str(tmp_path / "nope.toml")],
                 ["scenario", "run", str(tmp_path / "nope.yaml")]):
        done = subprocess.run([sys.executable, "-m", "skillc", *argv], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stdout + done.stderr
