"""Generated modules diff well: names derive from what they denote, so adding a tool to a contract
adds lines only (besides the header's hash), renaming a tool touches only that tool's block, and
the output is the same bytes run to run. Checked on every skill of the example studio."""
from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from skillc.compiler import codegen, ir
from skillc.compiler.frontend import check_skill
from skillc.compiler.jsonc import parse_json, plain
from skillc.compiler.sources import load_studio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "studio"
STUDIO = load_studio(EXAMPLE)
KEYS = sorted(s.skill_key for s in STUDIO.skills)
HEADER = re.compile(r"# contract sha256: [0-9a-f]{64}\n")
BLOCK = re.compile(r"^# -{10,} tool (.*)$")

NEW_TOOL = {
    "label": "Counting",
    "args": {"query": {"sources": ["USER"], "label": "Query", "missing": {"action": "CALL_TOOL", "tool": "x"}}},
    "success": {"path": "code", "op": "EQ", "value": 0},
    "extracts": [{"key": "n", "path": "data.count"}],
}


def _profile(key: str) -> ir.SkillProfile:
    return next(s for s in STUDIO.skills if s.skill_key == key)


def _data(profile: ir.SkillProfile) -> dict[str, Any]:
    j, diags = parse_json(profile.skill_contract)
    assert j is not None, diags
    return plain(j)


def _generate(profile: ir.SkillProfile, data: dict[str, Any] | None = None, tool_names: list[str] | None = None) -> str:
    if data is not None:
        profile = profile.model_copy(update={"skill_contract": json.dumps(data, indent=2, ensure_ascii=False)})
    if tool_names is not None:
        profile = profile.model_copy(update={"tool_names": tool_names})
    contract, diags = check_skill(profile)
    assert contract is not None, [d.message for d in diags]
    return codegen.generate_module(profile, contract)


def _changes(old: str, new: str) -> tuple[list[str], list[str]]:
    """(removed lines, added lines) of a diff, the header's hash line left out."""
    removed, added = [], []
    for line in difflib.ndiff(old.splitlines(keepends=True), new.splitlines(keepends=True)):
        if HEADER.fullmatch(line[2:]):
            continue
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


def _blocks(text: str) -> dict[str, list[str]]:
    """Tool note -> the lines of that tool's block (from its header to the next one or the end)."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines(keepends=True):
        m = BLOCK.match(line)
        if m:
            current = out.setdefault(m.group(1), [])
        if current is not None:
            current.append(line)
    return out


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("name", ["aaa_first_tool", "mmm_middle_tool", "zzz_last_tool"])
def test_adding_a_tool_adds_lines_only(key: str, name: str) -> None:
    profile = _profile(key)
    data = _data(profile)
    before = _generate(profile, data)
    data["tools"][name] = NEW_TOOL
    after = _generate(profile, data, [*profile.tool_names, name])
    removed, added = _changes(before, after)
    assert removed == [], "".join(removed)
    assert f'TOOLS["{name}"] = rt.ToolMeta(\n' in added and f'        "{name}",\n' in added


@pytest.mark.parametrize("key", KEYS)
def test_renaming_a_tool_changes_only_its_block(key: str) -> None:
    """Rename every tool in turn (and where the contract names it: target, missing.tool,
    verify.tool): outside its own block, only lines that name it change."""
    profile = _profile(key)
    data = _data(profile)
    before = _generate(profile, data)
    old_blocks = _blocks(before)
    for old in sorted(data["tools"]):
        new = old + "_renamed"
        q_old, q_new = json.dumps(old), json.dumps(new)
        renamed = json.loads(json.dumps(data).replace(q_old, q_new))
        after = _generate(profile, renamed, [new if t == old else t for t in profile.tool_names])
        new_blocks = _blocks(after)
        removed, added = _changes(before, after)
        own_old, own_new = old_blocks[q_old], new_blocks[q_new]
        assert all(line in own_old or q_old in line for line in removed), (old, "".join(removed))
        assert all(line in own_new or q_new in line for line in added), (old, "".join(added))
        others = [(k, v) for k, v in old_blocks.items() if k != q_old]
        for note, lines in others:  # another block changes only where it names the tool
            diff = _changes("".join(lines), "".join(new_blocks[note]))
            assert all(q_old in line for line in diff[0]) and all(q_new in line for line in diff[1]), (note, diff)


@pytest.mark.parametrize("key", KEYS)
def test_editing_one_tool_changes_only_its_block(key: str) -> None:
    profile = _profile(key)
    data = _data(profile)
    before = _generate(profile, data)
    tool = sorted(data["tools"])[0]
    data["tools"][tool]["label"] = "A new label"
    after = _generate(profile, data)
    removed, added = _changes(before, after)
    own = _blocks(after)[json.dumps(tool)]
    assert added and all(line in own for line in added)


def test_output_is_the_same_bytes_every_time() -> None:
    for key in KEYS:
        assert _generate(_profile(key)) == _generate(_profile(key))
