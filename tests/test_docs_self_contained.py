"""The repository explains itself: nothing cites a file that does not ship (the design notes, the
spec's file, the conformance format, "decision N": the spec is named by its project, and
docs/reference/contract.md renders it), every citation of docs/interpretations.md names
one of its entries, and contributor guidance is in CONTRIBUTING.md."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = re.compile(r"\.(py|md|js|yaml|yml|toml|jsonc|j2|lark|html|css)$")
# what does not ship: the design notes, the working rules, numbered decisions, the conformance format
OUTSIDE = re.compile(r"DESIGN\.md|DESIGN decision|\b[Dd]ecisions? \d+|FORMAT\.md|CONTRACT_SPEC\.md|docs/HELPERS\.md")


def tracked() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / n for n in names if TEXT.search(n) and (ROOT / n).is_file()]


def entries() -> set[str]:
    """The bold names that open docs/interpretations.md's entries."""
    text = (ROOT / "docs" / "interpretations.md").read_text(encoding="utf-8")
    return {name.replace("`", "") for name in re.findall(r"^- \*\*(.+?)\*\*", text, re.M)}


def test_nothing_cites_what_does_not_ship() -> None:
    found = []
    for path in tracked():
        if path.name == Path(__file__).name:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert found == []


def test_every_citation_names_an_interpretation() -> None:
    known = entries()
    assert {"A lost reply", "What drops a skill", "Restart", "Limits", "USER provenance"} <= known
    bad = []
    for path in tracked():
        text = path.read_text(encoding="utf-8", errors="replace")
        # a citation may run onto the next line of a comment or docstring
        for match in re.finditer(r'docs/interpretations\.md(?::\s+([^\n]+\n?[^\n]*)|, ((?:"[^"]+"(?:, )?)+))', text):
            if match.group(2):
                names = re.findall(r'"([^"]+)"', match.group(2))
                missing = [n for n in names if n not in known]
            else:
                rest = " ".join(match.group(1).replace("#", " ").split())
                missing = [] if any(rest.startswith(n) for n in known) else [rest[:40]]
            bad += [f"{path.relative_to(ROOT)}: {n}" for n in missing]
    assert bad == [], bad


def test_contributor_guidance_is_in_contributing() -> None:
    assert not (ROOT / "docs" / "HELPERS.md").exists()
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "docs/interpretations.md" in text and "pytest" in text
    assert "CONTRIBUTING.md" in (ROOT / "README.md").read_text(encoding="utf-8")
