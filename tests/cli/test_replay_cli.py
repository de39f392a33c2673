"""`skillc replay` from the command line: the human and JSON reports, --output, --labels,
--fail-on exit statuses, --help's examples, and bad input answered with exit 2 and one line."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.transcripts import LABELS, LOGS, WHO

from skillc.main import run as skillc

ROOT = Path(__file__).resolve().parents[2]
STUDIO = str(ROOT / "examples" / "studio")


@pytest.fixture(scope="module")
def compiled(compiled_example: Any) -> str:
    """The example studio's compiled directory (conftest compiles it once per module)."""
    return str(compiled_example.out_dir)


def test_the_human_report_gives_totals_and_every_stopped_call(compiled: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert skillc(["replay", LOGS, "--compiled", compiled, "--agent", "billing", *WHO]) == 0
    out = capsys.readouterr().out
    assert "5 conversation(s), 11 tool call(s)" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("all calls"))
    assert row.split()[2:] == ["11", "6", "2", "2", "1"]
    assert "ticket-102 #1 inv_invoice_void: REFUSED PARAM_PROVENANCE_REJECTED (agent_runtime.40025)" in out
    assert "ticket-101 #2 inv_invoice_void: APPROVAL ASKED; user before: \"yes\" (confirmed)" in out
    assert "ticket-101 #3 inv_invoice_void: REPLAYED" in out
    assert "ticket-104: call ids repeat" in out


def test_the_json_report_follows_its_schema(compiled: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "replay.json"
    assert skillc(["replay", LOGS, "--compiled", compiled, "--agent", "billing", *WHO, "--format", "json",
                   "-o", str(out), "--labels", LABELS]) == 0
    assert "report written to" in capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert (doc["schema"], doc["version"]) == ("skillc.replay", 1)
    t = doc["totals"]
    assert (t["conversations"], t["calls"], t["allowed"], t["refused"], t["approval_asked"], t["replayed"]) == (5, 11, 6, 2, 2, 1)
    assert t["writes"]["calls"] == 4 and t["by_tool"]["inv_invoice_void"]["calls"] == 4
    assert {r["name"] for r in t["by_code"]} == {"APPROVAL_REQUIRED", "PARAM_PROVENANCE_REJECTED", "PARAM_PROVENANCE_ASK_USER"}
    assert [w["verdict"] for w in doc["writes"]] == ["approval_asked", "replayed", "refused", "approval_asked"]
    c102 = next(c for c in doc["conversations"] if c["id"] == "ticket-102")
    assert c102["counterfactual_from"] == 1 and c102["calls"][0]["code"] == "agent_runtime.40025"
    labels = doc["labels"]
    assert (labels["wrong_stopped"], labels["wrong_held"], labels["wrong_after_yes"], labels["correct_refused"]) == (2, 1, 0, 0)
    assert labels["table"]["wrong"] == {"refused": 2, "replayed": 0, "approval_unconfirmed": 1, "approval_confirmed": 0,
                                        "allowed": 0, "not_judged": 0}
    assert labels["table"]["correct"]["approval_confirmed"] == 1 and labels["table"]["correct"]["replayed"] == 1


def test_fail_on_sets_the_exit_status(compiled: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["replay", "--compiled", compiled, "--agent", "billing", *WHO]
    assert skillc([*base, LOGS, "--fail-on", "refused"]) == 1
    clean = tmp_path / "clean.jsonl"
    clean.write_text(Path(LOGS).read_text().splitlines()[2] + "\n")  # ticket-103: two allowed lookups
    assert skillc([*base, str(clean), "--fail-on", "refused"]) == 0
    assert skillc([*base, str(clean), "--fail-on", "any"]) == 0
    clean.write_text(clean.read_text() + "{broken\n")
    assert skillc([*base, str(clean), "--fail-on", "refused"]) == 0
    assert skillc([*base, str(clean), "--fail-on", "any"]) == 1  # an unreadable record counts for `any`
    assert "clean.jsonl:2: not JSON" in capsys.readouterr().out


def test_bad_input_exits_2_with_one_line(compiled: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert skillc(["replay", str(tmp_path / "nope.jsonl"), "--compiled", compiled]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert skillc(["replay", LOGS, "--compiled", compiled, "--agent", "nobody"]) == 2
    assert "no agent 'nobody'" in capsys.readouterr().err
    assert skillc(["replay", LOGS, "--compiled", str(tmp_path)]) == 2
    assert "no compiled studio" in capsys.readouterr().err
    bad = tmp_path / "labels.json"
    bad.write_text('{"ticket-101": "correct"}')
    assert skillc(["replay", LOGS, "--compiled", compiled, "--labels", str(bad)]) == 2
    assert "not \"<conversation id>:<call index>\"" in capsys.readouterr().err
    assert skillc(["replay", LOGS, "--compiled", compiled, "--platform", "userId"]) == 2


def test_a_studio_source_is_compiled_for_the_replay(capsys: pytest.CaptureFixture[str]) -> None:
    assert skillc(["replay", LOGS, "--studio", STUDIO, "--agent", "billing", *WHO, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["studio"] == STUDIO


def test_help_teaches_with_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        skillc(["replay", "--help"])
    out = capsys.readouterr().out
    assert "examples:" in out and "--messages-key traj" in out and "exit status:" in out


def test_the_progress_bar_draws_only_for_long_inputs_and_wipes_itself() -> None:
    import io

    from skillc.replay.progress import LONG_INPUT, Bar

    ticks = iter(float(n) for n in range(100))
    out = io.StringIO()
    bar = Bar(out, clock=lambda: next(ticks))
    bar(10, 1000, 5)
    assert out.getvalue() == ""  # a small input finishes before a bar would be readable
    bar(LONG_INPUT // 2, LONG_INPUT, 1234)
    assert "[###############...............]  50%  1,234 calls judged" in out.getvalue()
    bar.close()
    assert out.getvalue().endswith("\r\033[K")
