"""The test suite's own layout: one import style for shared helpers, scenarios by topic."""
from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_helpers_are_imported_under_one_name() -> None:
    offenders = []
    for path in TESTS.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"^\s*(from tests[.\s]|import tests\b)", text, re.M):
            offenders.append(f"{path.relative_to(TESTS)}: {m.group(0).strip()}")
    assert not offenders, "import shared test code as helpers.<module> (see tests/conftest.py): " + ", ".join(offenders)


TOPICS = {"chain", "gate", "node", "outputs", "session", "planning", "delegation", "decisions"}


def test_scenario_folders_are_topics() -> None:
    folders = {p.name for p in (TESTS / "scenarios").iterdir() if p.is_dir()}
    assert folders <= TOPICS, f"scenario folders are named by topic ({sorted(TOPICS)}), not by author: {sorted(folders - TOPICS)}"
    assert all(any((TESTS / "scenarios" / t).glob("*.yaml")) for t in folders)
