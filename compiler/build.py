"""`skillc compile`: a studio -> validator modules, agent graph templates and a manifest in a directory.

Layout of the output directory:

    manifest.json            compiler version; per skill its key, hashes, module, status,
                             diagnostics and graph facts; per agent its graph file and skill keys
    skills/<module>.py       one validator module per loadable skill (codegen)
    agents/<name>.json       one task-graph template per agent (graphs)

File names come from an injective mapping of keys (a hash prefix, lengthened on collision), never
from key text. The build is incremental: a skill whose inputs (contract text, profile fields,
compiler version) hash the same as in the manifest, and whose module file is intact, is neither
re-parsed nor rewritten; files are only written when their bytes change.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from skillc.compiler import codegen, graphs, ir
from skillc.compiler.diagnostics import Diagnostic

MANIFEST = "manifest.json"
CODEGEN_FAILED = "SC490"

Progress = Callable[[int, int, str], None]


@dataclass
class BuildResult:
    """What a build did: files written/kept/removed (relative paths) and every diagnostic."""

    out_dir: Path
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    regenerated: list[str] = field(default_factory=list)  # skill keys compiled this time
    reused: list[str] = field(default_factory=list)  # skill keys taken from the manifest
    rejected: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when no skill was rejected."""
        return not self.rejected


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def file_names(keys: list[str], prefix: str) -> dict[str, str]:
    """An injective, stable key -> file stem mapping: `prefix` + the shortest sha256 prefix (≥12
    hex digits) that no other key shares; stems do not move when other keys come and go unless
    they collide."""
    digests = {k: _sha(k) for k in sorted(set(keys))}
    out: dict[str, str] = {}
    for k, d in digests.items():
        n = 12
        while any(o != k and od[:n] == d[:n] for o, od in digests.items()):
            n += 4
        out[k] = f"{prefix}{d[:n]}"
    return out


def _input_hash(skill: ir.SkillProfile) -> str:
    data = [
        codegen.COMPILER_VERSION,
        codegen.generator_fingerprint(),
        skill.skill_key,
        skill.skill_name,
        skill.semantic_desc,
        skill.skill_manual,
        skill.skill_contract,
        list(skill.tool_names),
    ]
    return _sha(json.dumps(data, ensure_ascii=False))


def _diag_record(d: Diagnostic) -> dict[str, Any]:
    return {"code": d.code, "severity": d.severity, "message": d.message, "line": d.line, "column": d.column}


def _diag_from_record(key: str, r: dict[str, Any]) -> Diagnostic:
    line, column = int(r.get("line", 1)), int(r.get("column", 1))
    return Diagnostic(
        code=r["code"], severity=r["severity"], message=r["message"], skill=key, line=line, column=column,
        end_line=line, end_column=column + 1,
    )


def _load_source(source: str | os.PathLike[str] | ir.Studio) -> ir.Studio:
    if isinstance(source, ir.Studio):
        return source
    from skillc.compiler.sources import load_studio

    return load_studio(source)


def _front_end(skills: list[ir.SkillProfile]) -> dict[str, tuple[ir.Contract | None, list[Diagnostic]]]:
    """The front end's verdict per skill (agent-level checks are redone by graphs over the whole
    studio, since an incremental build only re-checks changed skills)."""
    from skillc.compiler.frontend import check_skill

    return {s.skill_key: check_skill(s) for s in skills}


def _read_manifest(out: Path) -> dict[str, Any]:
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(out: Path, rel: str, text: str, result: BuildResult) -> None:
    path = out / rel
    data = text.encode("utf-8", "surrogatepass")
    try:
        if path.read_bytes() == data:
            result.unchanged.append(rel)
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)  # readers (the runtime's refresh) never see half a file
    result.written.append(rel)


def _json_text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def compile_studio(
    source: str | os.PathLike[str] | ir.Studio,
    out_dir: str | os.PathLike[str],
    *,
    progress: Progress | None = None,
    force: bool = False,
) -> BuildResult:
    """Compile a studio (a path any studio source accepts, or a Studio) into `out_dir`."""
    studio = _load_source(source)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result = BuildResult(out_dir=out)
    old = _read_manifest(out)
    old_skills: dict[str, Any] = old.get("skills", {}) if old.get("compiler_version") == codegen.COMPILER_VERSION else {}
    # Only ACTIVE profiles load (§1.1); sources have already dropped disabled bindings.
    studio = ir.Studio(
        agents=[a for a in studio.agents if a.status == "ACTIVE"],
        skills=[s for s in studio.skills if s.status == "ACTIVE"],
        origin=studio.origin,
    )
    skills = {s.skill_key: s for s in sorted(studio.skills, key=lambda s: s.skill_key)}
    modules = file_names(list(skills), "s_")
    entries: dict[str, dict[str, Any]] = {}
    todo: list[ir.SkillProfile] = []
    for key, skill in skills.items():
        prev = old_skills.get(key)
        rel = f"skills/{modules[key]}.py"
        if (
            not force
            and prev is not None
            and prev.get("input_sha256") == _input_hash(skill)
            and prev.get("module") == (rel if prev.get("status") == "ok" else None)
            and (prev.get("status") != "ok" or _intact(out / rel, prev.get("module_sha256")))
        ):
            entries[key] = prev
            result.reused.append(key)
            result.diagnostics.extend(_diag_from_record(key, r) for r in prev.get("diagnostics", []))
        else:
            todo.append(skill)
    checked = _front_end(todo)
    total = len(skills)
    done = len(result.reused)
    for skill in todo:
        key = skill.skill_key
        contract, own = checked[key]
        own = list(own)
        entry: dict[str, Any] = {
            "key": key,
            "contract_sha256": codegen.contract_sha256(skill.skill_contract),
            "input_sha256": _input_hash(skill),
            "module": None,
            "module_sha256": None,
            "status": "rejected",
            "facts": None,
        }
        if contract is not None:
            try:
                text = codegen.generate_module(skill, contract, sha256=entry["contract_sha256"])
            except codegen.UnsafeLiteral as exc:
                own.append(Diagnostic(code=CODEGEN_FAILED, severity="error", message=f"cannot generate code: {exc}", skill=key))
            else:
                rel = f"skills/{modules[key]}.py"
                _write(out, rel, text, result)
                entry.update(module=rel, module_sha256=_sha(text), status="ok", facts=graphs.skill_facts(skill, contract))
        entry["diagnostics"] = [_diag_record(d) for d in own]
        entries[key] = entry
        result.regenerated.append(key)
        result.diagnostics.extend(own)
        done += 1
        if progress is not None:
            progress(done, total, key)
    for key, entry in entries.items():
        if entry["status"] != "ok":
            result.rejected[key] = entry["diagnostics"]
        elif key in result.reused:
            result.unchanged.append(entry["module"])
    files = {s.skill_key: s.source.contract_file for s in studio.skills if s.source and s.source.contract_file}
    agents_out = _build_agents(studio, entries, out, result, files)
    manifest = {"compiler_version": codegen.COMPILER_VERSION, "skills": entries, "agents": agents_out}
    _remove_stale(out, manifest, result)
    _write(out, MANIFEST, _json_text(manifest), result)
    result.manifest = manifest
    return result


def _intact(path: Path, digest: str | None) -> bool:
    try:
        return digest is not None and hashlib.sha256(path.read_bytes()).hexdigest() == digest
    except OSError:
        return False


def _build_agents(
    studio: ir.Studio, entries: dict[str, dict[str, Any]], out: Path, result: BuildResult, files: dict[str, str]
) -> dict[str, Any]:
    facts = {k: e["facts"] for k, e in entries.items() if e["status"] == "ok"}
    all_keys = frozenset(entries)
    agents = sorted(studio.agents, key=lambda a: a.agent_code)
    names = file_names([a.agent_code for a in agents], "a_")
    out_agents: dict[str, Any] = {}
    for agent in agents:
        g, diags = graphs.build_agent_graph(agent, facts, all_keys, files)
        rel = f"agents/{names[agent.agent_code]}.json"
        text = _json_text(graphs.graph_to_data(g))
        _write(out, rel, text, result)
        result.diagnostics.extend(diags)
        out_agents[agent.agent_code] = {
            "graph": rel,
            "graph_sha256": _sha(text),
            "skills": sorted(g.nodes),
            "diagnostics": [dict(_diag_record(d), skill=d.skill) for d in diags],
        }
    return out_agents


def _remove_stale(out: Path, manifest: dict[str, Any], result: BuildResult) -> None:
    keep = {e["module"] for e in manifest["skills"].values() if e.get("module")}
    keep |= {a["graph"] for a in manifest["agents"].values()}
    for folder, pattern in (("skills", "s_*.py"), ("agents", "a_*.json")):
        for path in sorted((out / folder).glob(pattern)):
            rel = f"{folder}/{path.name}"
            if rel not in keep:
                path.unlink()
                result.removed.append(rel)


def _tree(root: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    for folder, pattern in (("skills", "s_*.py"), ("agents", "a_*.json"), (".", MANIFEST)):
        for path in sorted((root / folder).glob(pattern)):
            rel = path.relative_to(root).as_posix()
            files[rel] = path.read_text(encoding="utf-8", errors="surrogateescape")
    return files


def check_stale(source: str | os.PathLike[str] | ir.Studio, out_dir: str | os.PathLike[str]) -> list[str]:
    """Unified-diff lines between `out_dir` and a fresh compile of `source` (empty: up to date)."""
    with tempfile.TemporaryDirectory(prefix="skillc-check-") as tmp:
        compile_studio(source, tmp, force=True)
        fresh = _tree(Path(tmp))
    current = _tree(Path(out_dir)) if Path(out_dir).is_dir() else {}
    lines: list[str] = []
    for rel in sorted(set(fresh) | set(current)):
        a, b = current.get(rel), fresh.get(rel)
        if a == b:
            continue
        lines.extend(
            difflib.unified_diff(
                (a or "").splitlines(keepends=True),
                (b or "").splitlines(keepends=True),
                fromfile=f"a/{rel}" if a is not None else "/dev/null",
                tofile=f"b/{rel}" if b is not None else "/dev/null",
            )
        )
    return lines


def clean(out_dir: str | os.PathLike[str]) -> None:
    """Remove what a build wrote in `out_dir` (other files are left alone)."""
    out = Path(out_dir)
    for folder in ("skills", "agents"):
        shutil.rmtree(out / folder, ignore_errors=True)
    (out / MANIFEST).unlink(missing_ok=True)
