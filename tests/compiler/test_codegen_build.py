"""compile_studio: determinism, incremental builds, `--check`, graph templates, the committed generated/."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillc.compiler import build, graphs, ir
from skillc.compiler.sources import load_studio
from skillc.main import run as cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "studio"


def _skill(key: str, contract: dict[str, Any], tools: list[str] | None = None) -> ir.SkillProfile:
    return ir.SkillProfile(skill_key=key, skill_name=key, skill_contract=json.dumps(contract), tool_names=tools or sorted(contract.get("tools", {})))


def _studio(extra_input: dict[str, Any] | None = None) -> ir.Studio:
    consumer = {"inputs": {"space": {"from": "session.spaceId", "provider": "a.provider"}, **(extra_input or {})}, "tools": {"q": {}}}
    provider = {"delegatable": True, "outputs": {"spaceId": {"share": "SESSION"}}, "tools": {"list": {}}}
    writer = {"target": "w", "tools": {"w": {"sideEffect": "WRITE", "success": {"path": "code", "op": "EQ", "value": 0}}}}
    return ir.Studio(
        agents=[
            ir.AgentProfile(agent_code="main", agent_name="Main", mission_desc="m", skills=["a.consumer", "a.provider", "a.writer"]),
            ir.AgentProfile(agent_code="other", skills=["b.only"]),
        ],
        skills=[_skill("a.consumer", consumer), _skill("a.provider", provider), _skill("a.writer", writer), _skill("b.only", {"tools": {}}),
                ir.SkillProfile(skill_key="z.broken", skill_contract="{ nope")],
    )


def _files(root: Path) -> dict[str, bytes]:
    """What a build wrote (the stamp cache, which holds file times, left out)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.name != build.STAMPS}


def test_build_layout_and_graph(tmp_path: Path) -> None:
    result = build.compile_studio(_studio(), tmp_path)
    assert set(result.rejected) == {"z.broken"} and result.rejected["z.broken"][0]["code"] == "SC101"
    m = json.loads((tmp_path / "manifest.json").read_text())
    assert m["skills"]["a.writer"]["status"] == "ok" and (tmp_path / m["skills"]["a.writer"]["module"]).is_file()
    assert m["skills"]["z.broken"]["module"] is None
    g = graphs.build_agent_graph(_studio().agents[0], {k: e["facts"] for k, e in m["skills"].items() if e["facts"]}, set(m["skills"]))[0]
    assert list(g.edges) == [("a.provider", "a.consumer")]
    assert g.edges["a.provider", "a.consumer"]["share_key"] == [["k", "spaceId"]]
    assert g.graph["delegation_catalog"] == ["a.provider"] and g.graph["agent_name"] == "Main"
    assert g.nodes["a.writer"]["target"] == "w" and not g.nodes["a.writer"]["read_only"]
    assert m["agents"]["main"]["skills"] == ["a.consumer", "a.provider", "a.writer"]


@pytest.mark.parametrize(
    ("provider", "code", "reason"),
    [("nobody", "SC401", "unknown"), ("b.only", "SC402", "other_agent"), ("a.consumer", "SC403", "self"), ("z.broken", "SC402", "other_agent")],
)
def test_bad_providers_are_warnings(tmp_path: Path, provider: str, code: str, reason: str) -> None:
    result = build.compile_studio(_studio({"x": {"provider": provider}}), tmp_path)
    assert "a.consumer" not in result.rejected
    assert [d.code for d in result.diagnostics if d.code.startswith("SC4")] == [code]
    g = _graph(tmp_path, "main")
    assert g.nodes["a.consumer"]["unavailable_inputs"] == [{"input": "x", "provider": provider, "reason": reason, "position": 1}]


def test_provider_cycle(tmp_path: Path) -> None:
    studio = _studio()
    studio.skills[1] = _skill("a.provider", {"inputs": {"back": {"provider": "a.consumer"}}, "tools": {"list": {}}})
    result = build.compile_studio(studio, tmp_path)
    assert sorted(d.code for d in result.diagnostics if d.code.startswith("SC4")) == ["SC404", "SC404"]
    g = _graph(tmp_path, "main")
    assert list(g.edges) == []


def _graph(out: Path, agent: str):  # noqa: ANN202
    from skillc.runtime.compiled.loader import load_compiled

    return load_compiled(out).agents[agent].graph


def test_incremental_rewrites_only_the_changed_skill(tmp_path: Path) -> None:
    first = build.compile_studio(_studio(), tmp_path)
    assert sorted(first.regenerated) == ["a.consumer", "a.provider", "a.writer", "b.only", "z.broken"]
    before = _files(tmp_path)
    again = build.compile_studio(_studio(), tmp_path)
    assert again.regenerated == [] and again.written == [] and _files(tmp_path) == before
    (tmp_path / build.STAMPS).write_text("{not json")  # a broken cache only costs hashing
    assert build.compile_studio(_studio(), tmp_path).written == [] and _files(tmp_path) == before
    studio = _studio()
    studio.skills[2] = _skill("a.writer", {"target": "w", "tools": {"w": {"sideEffect": "WRITE", "success": {"path": "code", "op": "EQ", "value": 1}}}})
    third = build.compile_studio(studio, tmp_path)
    assert third.regenerated == ["a.writer"]
    changed = {k for k, v in _files(tmp_path).items() if before.get(k) != v}
    assert changed == {"manifest.json", json.loads((tmp_path / "manifest.json").read_text())["skills"]["a.writer"]["module"]}
    # a hand-edited module is regenerated; a removed skill's module is deleted
    module = tmp_path / third.manifest["skills"]["a.provider"]["module"]
    module.write_text("# edited\n")
    studio.skills = [s for s in studio.skills if s.skill_key != "a.writer"]
    fourth = build.compile_studio(studio, tmp_path)
    assert fourth.regenerated == ["a.provider"] and "# edited" not in module.read_text()
    assert fourth.removed == [third.manifest["skills"]["a.writer"]["module"]]
    assert build.compile_studio(studio, tmp_path, force=True).regenerated == ["a.consumer", "a.provider", "b.only", "z.broken"]


def test_deterministic_across_processes(tmp_path: Path) -> None:
    build.compile_studio(EXAMPLE, tmp_path / "one")
    code = f"from skillc.compiler.build import compile_studio; compile_studio({str(EXAMPLE)!r}, {str(tmp_path / 'two')!r})"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=tmp_path)
    assert _files(tmp_path / "one") == _files(tmp_path / "two")


def test_check_flags_a_stale_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "gen"
    assert cli(["compile", str(EXAMPLE), "-o", str(out), "-q"]) == 0
    assert cli(["compile", str(EXAMPLE), "-o", str(out), "--check"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    module = out / next(iter(manifest["skills"].values()))["module"]
    module.write_text(module.read_text().replace("def _cms_article_get__judge(", "def _cms_article_get__judge_edited("))
    capsys.readouterr()
    assert cli(["compile", str(EXAMPLE), "-o", str(out), "--check"]) == 1
    diff = capsys.readouterr().out
    assert f"--- a/{module.relative_to(out).as_posix()}" in diff
    assert "-def _cms_article_get__judge_edited(" in diff and "+def _cms_article_get__judge(" in diff


def test_committed_generated_dir_is_current() -> None:
    """generated/ is the compiled example studio: recompile with `skillc compile examples/studio -o generated`."""
    diff = build.check_stale(EXAMPLE, ROOT / "generated")
    assert diff == [], "".join(diff[:40])


def test_file_names_are_injective() -> None:
    names = build.file_names([f"k{i}" for i in range(2000)] + ["k1"])
    assert len(set(names.values())) == len(names) == 2000 and names["k1"] == "k1"


@pytest.mark.parametrize(
    "key",
    ["Cms.Article.Find", "con", "CON.article", "nul.x", "com1", "lpt9.a", "a/b", "a\\b", "a:b", "x.", "x" * 101, "é.find", "",
     "a b", "_private", ".hidden", "-dash", "tab\there", "q?", "star*"],
)
def test_odd_keys_get_a_portable_fallback(key: str) -> None:
    stem = build.file_stem(key)
    assert stem.startswith("_") and len(stem) <= 64 and stem == stem.lower()
    assert all(c.isascii() and (c.isalnum() or c in "._-") for c in stem) and not stem.endswith(".")
    assert build.file_stem(key) == stem  # deterministic


def test_file_names_differ_on_case_insensitive_file_systems() -> None:
    keys = ["cms.article.find", "Cms.Article.Find", "CMS.ARTICLE.FIND", "cms.article.Find", "con.x", "CON.x"]
    names = build.file_names(keys)
    assert names["cms.article.find"] == "cms.article.find"
    assert len({n.casefold() for n in names.values()}) == len(keys)
    # a plain name never collides with a fallback: plain names never start with "_"
    assert all(n.startswith("_") for k, n in names.items() if k != "cms.article.find")


def test_skills_and_agents_are_files_named_after_their_keys(tmp_path: Path) -> None:
    result = build.compile_studio(_studio(), tmp_path)
    assert result.manifest["skills"]["a.writer"]["module"] == "skills/a.writer.py"
    assert result.manifest["agents"]["main"]["graph"] == "agents/main.json"
    assert sorted(p.name for p in (tmp_path / "skills").iterdir()) == ["a.consumer.py", "a.provider.py", "a.writer.py", "b.only.py"]


def test_graph_and_explain_commands(capsys: pytest.CaptureFixture[str]) -> None:
    studio = load_studio(EXAMPLE)
    agent = next(a for a in studio.agents if len(a.skills) > 1)
    for fmt in ("mermaid", "dot", "json"):
        assert cli(["graph", agent.agent_code, str(EXAMPLE), "--format", fmt]) == 0
    assert cli(["graph", agent.agent_code, str(ROOT / "generated"), "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert out.count('"agent_code"') == 2 and "flowchart LR" in out and "digraph" in out
    assert cli(["graph", "no-such-agent", str(EXAMPLE)]) == 2
    key = studio.skills[0].skill_key
    assert cli(["explain", key, str(EXAMPLE)]) == 0
    assert f"skill {key}" in capsys.readouterr().out


def test_an_edited_generator_regenerates_without_touching_the_manifest(tmp_path: Path) -> None:
    first = build.compile_studio(_studio(), tmp_path)
    before = _files(tmp_path)
    cache = json.loads((tmp_path / build.STAMPS).read_text())
    cache["generator"] = "an older generator"
    (tmp_path / build.STAMPS).write_text(json.dumps(cache))
    again = build.compile_studio(_studio(), tmp_path)
    assert sorted(again.regenerated) == sorted(first.regenerated) and again.written == [] and _files(tmp_path) == before
    assert build.compile_studio(_studio(), tmp_path).regenerated == []


def test_an_agent_template_is_rebuilt_only_when_its_own_inputs_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit to another agent's skill keeps this agent's template (an incremental compile of a
    large studio rebuilt every agent on any change); its own skill or the studio's key set rebuild it."""
    built: list[str] = []
    real = graphs.build_agent_graph

    def counting(agent: ir.AgentProfile, *a: Any, **kw: Any) -> Any:
        built.append(agent.agent_code)
        return real(agent, *a, **kw)

    monkeypatch.setattr(graphs, "build_agent_graph", counting)
    build.compile_studio(_studio(), tmp_path)
    assert sorted(built) == ["main", "other"]
    studio = _studio()
    studio.skills[3] = _skill("b.only", {"tools": {"t": {}}})
    built.clear()
    assert build.compile_studio(studio, tmp_path).regenerated == ["b.only"] and built == ["other"]
    studio.skills[0] = _skill("a.consumer", {"inputs": {"space": {"from": "session.spaceId", "provider": "b.only"}}, "tools": {"q": {}}})
    built.clear()
    build.compile_studio(studio, tmp_path)
    assert built == ["main"]
    assert _graph(tmp_path, "main").nodes["a.consumer"]["unavailable_inputs"][0]["reason"] == "other_agent"
    # the key set changes (b.only gone): main's provider is now unknown, so its template is rebuilt
    studio.skills = [s for s in studio.skills if s.skill_key != "b.only"]
    built.clear()
    build.compile_studio(studio, tmp_path)
    assert built == ["main", "other"]
    assert _graph(tmp_path, "main").nodes["a.consumer"]["unavailable_inputs"][0]["reason"] == "unknown"
    # and the same studio compiled afresh gives the same files as the incremental path
    fresh = tmp_path / "fresh"
    build.compile_studio(studio, fresh)
    assert _files(fresh) == {k: v for k, v in _files(tmp_path).items() if not k.startswith("fresh/")}


def test_did_you_mean_is_computed_once_per_name_and_key_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fifty skills naming the same unknown provider ask difflib once, not fifty times."""
    import difflib

    calls: list[str] = []
    real = difflib.get_close_matches

    def counting(word: str, *a: Any, **kw: Any) -> list[str]:
        calls.append(word)
        return real(word, *a, **kw)

    monkeypatch.setattr(difflib, "get_close_matches", counting)
    skills = [_skill(f"s.n{i:03d}", {"inputs": {"x": {"provider": "s.nX99"}}, "tools": {"q": {}}}) for i in range(50)]
    studio = ir.Studio(agents=[ir.AgentProfile(agent_code=f"a{j}", skills=[s.skill_key for s in skills[j::5]]) for j in range(5)], skills=skills)
    result = build.compile_studio(studio, tmp_path)
    unknown = [d for d in result.diagnostics if d.code == "SC401"]
    assert len(unknown) == 50 and {d.help for d in unknown} == {"did you mean 's.n049'?"}
    assert calls.count("s.nX99") == 1


def test_a_no_op_build_replays_diagnostics_without_parsing_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unchanged skill's diagnostics (file, excerpt and help included) come from the build's
    cache: re-running the front end on every skill with a warning was 80 % of a no-op build of
    1,000 skills. Without the cache (deleted, or another generator) they come from the front end,
    the same."""
    from skillc.compiler import frontend

    studio = load_studio(EXAMPLE)
    first = build.compile_studio(studio, tmp_path)
    assert first.diagnostics and any(d.excerpt for d in first.diagnostics)
    expected = [d.model_dump() for d in first.diagnostics]
    parsed: list[str] = []
    real = frontend.check_skill
    monkeypatch.setattr(frontend, "check_skill", lambda s: (parsed.append(s.skill_key), real(s))[1])
    again = build.compile_studio(studio, tmp_path)
    assert not again.regenerated and parsed == []
    assert [d.model_dump() for d in again.diagnostics] == expected
    (tmp_path / build.STAMPS).unlink()
    cold_cache = build.compile_studio(studio, tmp_path)
    assert parsed and [d.model_dump() for d in cold_cache.diagnostics] == expected
    parsed.clear()
    assert [d.model_dump() for d in build.compile_studio(studio, tmp_path).diagnostics] == expected and parsed == []
    cache = json.loads((tmp_path / build.STAMPS).read_text())
    cache["diagnostics"] = {key: [{"code": 7}] for key in cache["diagnostics"]}  # unreadable entries
    (tmp_path / build.STAMPS).write_text(json.dumps(cache))
    assert [d.model_dump() for d in build.compile_studio(studio, tmp_path).diagnostics] == expected and parsed
