"""The Markdown and HTML reports: everything the recording or studio says is escaped (a call id,
a tool name, a user message are attacker-controlled text), the HTML is one file that names no
other host, and both carry the same totals as the JSON."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.transcripts import FOUND, LABELS, LOGS, WHO, answer, call, user

from skillc.main import run as skillc

ROOT = Path(__file__).resolve().parents[2]
EVIL = '<script>alert("x")</script>|`**'


@pytest.fixture(scope="module")
def compiled(compiled_example: Any) -> str:
    """The example studio's compiled directory (conftest compiles it once per module)."""
    return str(compiled_example.out_dir)


def _evil_log(tmp_path: Path) -> str:
    rec = {"id": EVIL, "messages": [user(f"find {EVIL}"), call("a", EVIL, {"q": EVIL}), answer("a", FOUND),
                                    call("b", "inv_invoice_find", {"invoiceNo": EVIL}), answer("b", FOUND)]}
    path = tmp_path / "evil.jsonl"
    path.write_text(json.dumps(rec) + "\n{" + EVIL + "\n")
    return str(path)


def _report(compiled: str, fmt: str, tmp_path: Path, *files: str, extra: tuple[str, ...] = ()) -> str:
    out = tmp_path / f"report.{fmt}"
    assert skillc(["replay", *files, "--compiled", compiled, "--agent", "billing", *WHO, "--format", fmt,
                   "-o", str(out), *extra]) == 0
    return out.read_text(encoding="utf-8")


def test_html_is_one_self_contained_escaped_file(compiled: str, tmp_path: Path) -> None:
    html = _report(compiled, "html", tmp_path, LOGS, _evil_log(tmp_path), extra=("--labels", LABELS))
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html.lower()
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    # no other host: no src/href at all, and the CSP forbids any fetch
    assert not re.search(r"\b(src|href)\s*=", html) and "default-src 'none'" in html
    assert html.count("<details") == 6 and "<svg" in html and html.count("<rect") >= 8
    assert "wrong calls stopped" in html and "2 / 3" in html
    assert "Unreadable records, skipped (1)" in html


def test_markdown_escapes_table_cells(compiled: str, tmp_path: Path) -> None:
    md = _report(compiled, "markdown", tmp_path, _evil_log(tmp_path))
    assert "<script>" not in md and "&lt;script&gt;" in md
    calls = md[md.index("| # | tool |"):]
    rows = [line for line in calls.splitlines() if line.startswith("| 1 |") or line.startswith("| 2 |")]
    assert len(rows) == 2
    for row in rows:  # an escaped pipe never splits a cell: every call row has the table's five cells
        assert len(re.split(r"(?<!\\)\|", row.strip())[1:-1]) == 5, row
    assert "\\`" in md and "\\*\\*" in md


def test_every_format_carries_the_same_totals(compiled: str, tmp_path: Path) -> None:
    doc: dict[str, Any] = json.loads(_report(compiled, "json", tmp_path, LOGS))
    t = doc["totals"]
    md = _report(compiled, "markdown", tmp_path, LOGS)
    row = " | ".join(str(t[k]) for k in ("calls", "allowed", "refused", "approval_asked", "replayed"))
    assert f"| all calls | {row} |" in md
    html = _report(compiled, "html", tmp_path, LOGS)
    assert "".join(f'<td class="n">{t[k]}</td>' for k in ("calls", "allowed", "refused", "approval_asked",
                                                          "replayed")) in html
    human = _report(compiled, "human", tmp_path, LOGS)
    assert f"{t['conversations']} conversation(s), {t['calls']} tool call(s)" in human
