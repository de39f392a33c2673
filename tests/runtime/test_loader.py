"""runtime.loader: import a compiled directory, refresh per turn, never need the compiler."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skillc.compile_on_load import compile_on_load
from skillc.compiler import build, ir
from skillc.runtime.compiled.loader import CompiledStudioError, load_compiled

ROOT = Path(__file__).resolve().parents[2]


def _studio(value: int) -> ir.Studio:
    def skill(key: str, v: int) -> ir.SkillProfile:
        contract = {"tools": {"t": {"success": {"path": "code", "op": "EQ", "value": v}}}}
        return ir.SkillProfile(skill_key=key, skill_contract=json.dumps(contract), tool_names=["t"])

    return ir.Studio(
        agents=[ir.AgentProfile(agent_code="ag", agent_name="Agent", skills=["s.one", "s.two"])],
        skills=[skill("s.one", 1), skill("s.two", value), ir.SkillProfile(skill_key="s.bad", skill_contract="[")],
    )


def test_load_and_refresh_reimports_only_changed(tmp_path: Path) -> None:
    build.compile_studio(_studio(2), tmp_path)
    studio = load_compiled(tmp_path)
    assert sorted(studio.skills) == ["s.one", "s.two"] and studio.rejected["s.bad"][0]["code"] == "SC101"
    assert studio.agents["ag"].agent_name == "Agent" and studio.agents["ag"].skills == ("s.one", "s.two")
    one, two = studio.skills["s.one"], studio.skills["s.two"]
    assert one.__name__ != two.__name__
    assert two.TOOLS["t"].judge({"code": 2}).business_ok
    assert studio.refresh() is False  # nothing changed: the manifest is not even parsed
    build.compile_studio(_studio(3), tmp_path)
    assert studio.refresh() is True
    assert studio.skills["s.one"] is one and studio.skills["s.two"] is not two
    assert studio.skills["s.two"].TOOLS["t"].judge({"code": 3}).business_ok
    assert studio.agents["ag"].graph.number_of_nodes() == 2


def test_compile_on_load(tmp_path: Path) -> None:
    src = tmp_path / "studio"
    (src / "skills" / "s.x").mkdir(parents=True)
    (src / "agents").mkdir()
    (src / "agents" / "ag.yaml").write_text("agent_name: A\nskills: [s.x]\n")
    (src / "skills" / "s.x" / "skill.yaml").write_text("skill_name: X\ntools: [t]\n")
    contract = src / "skills" / "s.x" / "contract.jsonc"
    contract.write_text('{"tools": {"t": {"success": {"path": "code", "op": "EQ", "value": 1}}}}')
    with pytest.raises(CompiledStudioError, match="needs a compiler"):  # the runtime has none of its own
        load_compiled(tmp_path / "out", source=src)
    studio = load_compiled(tmp_path / "out", source=src, compiler=compile_on_load)  # what the CLI passes
    first = studio.skills["s.x"]
    assert studio.refresh() is False and studio.skills["s.x"] is first
    contract.write_text('{"tools": {"t": {"success": {"path": "code", "op": "EQ", "value": 2}}}}')
    assert studio.refresh() is True and studio.skills["s.x"].TOOLS["t"].judge({"code": 2}).business_ok


def test_tampered_module_is_refused(tmp_path: Path) -> None:
    result = build.compile_studio(_studio(2), tmp_path)
    (tmp_path / result.manifest["skills"]["s.one"]["module"]).write_text("raise SystemExit\n")
    with pytest.raises(CompiledStudioError, match="does not match the manifest"):
        load_compiled(tmp_path)
    with pytest.raises(CompiledStudioError, match="no compiled studio"):
        load_compiled(tmp_path / "nowhere")


def test_runtime_loads_generated_without_compiler_or_lark() -> None:
    code = """
import sys
sys.modules['lark'] = None
from skillc.runtime.compiled.loader import load_compiled
s = load_compiled(sys.argv[1])
assert s.skills and s.agents, s
assert not [m for m in sys.modules if m.startswith('skillc.compiler')], sorted(sys.modules)
print(len(s.skills))
"""
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "generated")], check=True, capture_output=True, text=True)
    assert int(out.stdout) >= 1


def test_manifest_paths_stay_inside_the_directory(tmp_path: Path) -> None:
    result = build.compile_studio(_studio(2), tmp_path)
    assert result.manifest["skills"]["s.one"]["module"] == "skills/s.one.py"  # a stem with dots imports
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    manifest["skills"]["s.one"]["module"] = "../elsewhere.py"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CompiledStudioError, match="outside"):
        load_compiled(tmp_path)
