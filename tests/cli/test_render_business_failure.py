"""What `skillc chat` and `skillc demo` print for a write the system refused (the CMS's 409): not a
bare green "settled SUCCESS" beside "business failure", but what the outcome means and the
system's own message."""
from __future__ import annotations

import asyncio
from pathlib import Path

from skillc.render import Renderer
from skillc.scenario.runner import run_scenario

CONFLICT = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "02-lifecycle-title-conflict.yaml"


def test_a_settled_business_failure_says_what_it_means() -> None:
    result = asyncio.run(run_scenario(CONFLICT))
    assert result.ok, result.problems
    lines: list[str] = []
    renderer = Renderer(lines.append)
    for event in result.events:
        renderer.event(event)
    settled = [line for line in lines if "write e2 (cms_article_create) settled SUCCESS via call" in line]
    assert len(settled) == 1, lines
    assert "✓" not in settled[0]  # a check mark beside a refused write read as a success
    assert "its effect is known" in settled[0] and "the business verdict is failure" in settled[0]
    assert settled[0].endswith("an article titled 'Spring launch' already exists in space 3")  # the system's words


def test_a_plain_success_keeps_its_check_mark() -> None:
    lines: list[str] = []
    renderer = Renderer(lines.append)
    renderer.event({"type": "tool.call", "tool": "t", "ok": True, "business_ok": True, "evidence": "e1", "args": {}})
    renderer.event({"type": "write.settled", "evidence": "e1", "tool": "t", "status": "SUCCESS", "via": "call"})
    assert lines[-1] == "    ✓ write e1 (t) settled SUCCESS via call"
