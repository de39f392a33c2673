"""`skillc compile`: a studio -> validator modules, agent graph templates and a manifest in a directory.

Layout of the output directory:

    manifest.json            compiler version; per skill its key, hashes, module, status,
                             diagnostics and graph facts; per agent its graph file and skill keys
    skills/<skill_key>.py    one validator module per loadable skill (codegen)
    agents/<agent_code>.json one task-graph template per agent (graphs)

A file is named after its key when the key is a portable file name (`file_stem`): lower-case ASCII
letters, digits, `.`, `_` and `-`, not a reserved device name, not too long. Any other key gets
`_<readable part>.<hash>` (a leading `_`, which a key-named file never has), so the mapping is
injective on every file system, case-insensitive ones included, and the same run to run.

The build is incremental: a skill whose inputs (contract text, profile fields, compiler version)
hash the same as in the manifest, and whose module file is intact, is neither re-parsed nor
rewritten, unless the generator's own source changed since the last build (`STAMPS`); files are
only written when their bytes change.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from skillc.compiler import codegen, graphs, ir
from skillc.compiler.codegen_literals import UnsafeLiteral
from skillc.compiler.diagnostics import Diagnostic

MANIFEST = "manifest.json"
# Local build state, not part of the output: the generator's fingerprint (an edited generator
# regenerates everything, without the committed manifest depending on the generator's source) and
# (mtime_ns, size, sha256) per written file, so a no-op build checks that modules are intact with a
# stat instead of hashing every file; and each skill's diagnostics whole (file, excerpt, help), so an
# unchanged skill's warnings are shown again without parsing its contract again. A stale or missing
# cache only costs regenerating (or re-parsing).
STAMPS = ".skillc-stamps.json"
CODEGEN_FAILED = "SC490"

Progress = Callable[[int, int, str], None]


@dataclass
class BuildResult:
    """What a build did: files written/kept/removed (relative paths) and every diagnostic."""

    out_dir: Path
    written: list[str] = field(default_factory=list)
    stamps: dict[str, list[Any]] = field(default_factory=dict, repr=False)  # rel -> [mtime_ns, size, sha256]
    notes: dict[str, list[dict[str, Any]]] = field(default_factory=dict, repr=False)  # _notes_key -> diagnostics
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
    # Strict UTF-8: the studio's border (compiler.studio_border) keeps lone surrogates out, so one
    # reaching here is a bug that must fail loudly, not a file the runtime cannot load.
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_PORTABLE = re.compile(r"[a-z0-9][a-z0-9._-]*", re.ASCII)
# Windows device names: reserved whatever the extension (`con.article` included), in any case.
_RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))})
_MAX_STEM = 100


def file_stem(key: str, digits: int = 12) -> str:
    """The file stem of a skill key or agent code: the key itself when it is a portable name, else
    `_<its portable characters>.<sha256 prefix>` (`digits` hex digits)."""
    if len(key) <= _MAX_STEM and _PORTABLE.fullmatch(key) and key[-1] != "." and key.split(".", 1)[0] not in _RESERVED:
        return key
    tail = re.sub(r"[^a-z0-9._-]+", "-", key.lower(), flags=re.ASCII)[:48].strip(".-")
    return f"_{tail}.{_sha(key)[:digits]}" if tail else f"_{_sha(key)[:digits]}"


def file_names(keys: list[str]) -> dict[str, str]:
    """An injective key -> file stem mapping (`file_stem`), checked on case-folded stems; only two
    keys whose fallback stems share a 48-bit hash prefix get a longer one (in practice never)."""
    out: dict[str, str] = {}
    owner: dict[str, str] = {}
    for k in sorted(set(keys)):
        digits = 12
        stem = file_stem(k, digits)
        while owner.setdefault(stem.casefold(), k) != k:
            digits += 4
            stem = file_stem(k, digits)
        out[k] = stem
    return out


def _input_hash(skill: ir.SkillProfile) -> str:
    """A hash of everything a skill's module is made from (length-prefixed, so fields cannot run
    into each other)."""
    fields = (codegen.COMPILER_VERSION, skill.skill_key, skill.skill_name,
              skill.semantic_desc, skill.skill_manual, skill.skill_contract, *skill.tool_names)
    return _sha("".join(f"{len(f)}:{f}" for f in fields))


def _notes_key(skill: ir.SkillProfile) -> str:
    """What a skill's diagnostics are a function of, for the cache: the whole profile (its source
    file and place included, which the diagnostics name), under one generator."""
    return _sha(json.dumps(skill.model_dump(), sort_keys=True, default=str))  # ASCII: a lone surrogate escapes


def _diag_record(d: Diagnostic) -> dict[str, Any]:
    return {"code": d.code, "severity": d.severity, "message": d.message, "line": d.line, "column": d.column}


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
    data = text.encode("utf-8")  # strict: a compiled studio the runtime cannot read is never written
    try:
        if path.read_bytes() == data:
            result.unchanged.append(rel)
            _stamp(out, rel, hashlib.sha256(data).hexdigest(), result)
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)  # readers (the runtime's refresh) never see half a file
    result.written.append(rel)
    _stamp(out, rel, hashlib.sha256(data).hexdigest(), result)


def _stamp(out: Path, rel: str, digest: str, result: BuildResult) -> None:
    try:
        st = os.stat(out / rel)
    except OSError:
        return
    result.stamps[rel] = [st.st_mtime_ns, st.st_size, digest]


def _read_cache(out: Path) -> dict[str, Any]:
    try:
        data = json.loads((out / STAMPS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and isinstance(data.get("files"), dict) else {}


def _json_text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


# The C encoder (json's indenting encoder is pure Python, and was a third of a no-op build).
_COMPACT = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


def _manifest_text(manifest: dict[str, Any]) -> str:
    """The manifest as JSON with one line per skill and per agent: cheap to write for thousands of
    skills, and a reviewer's diff names each skill whose entry changed."""
    lines = ["{"]
    for i, top in enumerate(sorted(manifest)):
        value = manifest[top]
        comma = "," if i < len(manifest) - 1 else ""
        if isinstance(value, dict) and value:
            lines.append(f" {_COMPACT(top)}: {{")
            keys = sorted(value)
            lines += [f"  {_COMPACT(k)}: {_COMPACT(value[k])}{',' if j < len(keys) - 1 else ''}" for j, k in enumerate(keys)]
            lines.append(f" }}{comma}")
        else:
            lines.append(f" {_COMPACT(top)}: {_COMPACT(value)}{comma}")
    return "\n".join(lines) + "\n}\n"


def compile_studio(
    source: str | os.PathLike[str] | ir.Studio,
    out_dir: str | os.PathLike[str],
    *,
    progress: Progress | None = None,
    force: bool = False,
) -> BuildResult:
    """Compile a studio (a path any studio source accepts, or a Studio) into `out_dir`."""
    studio = _active(_load_source(source))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result = BuildResult(out_dir=out)
    old = _read_manifest(out)
    cache = _read_cache(out)
    generator = codegen.generator_fingerprint()
    same_generator = not force and cache.get("generator") == generator
    old_stamps: dict[str, list[Any]] = cache["files"] if same_generator else {}
    notes = cache.get("diagnostics") if same_generator else None
    old_notes: dict[str, list[dict[str, Any]]] = notes if isinstance(notes, dict) else {}
    same_compiler = same_generator and old.get("compiler_version") == codegen.COMPILER_VERSION
    old_skills: dict[str, Any] = old.get("skills", {}) if same_compiler else {}
    skills = {s.skill_key: s for s in sorted(studio.skills, key=lambda s: s.skill_key)}
    modules = file_names(list(skills))
    entries, todo = _reuse_unchanged(skills, modules, old_skills, out, old_stamps, old_notes, result, force=force)
    checked = _front_end(todo)
    done = len(result.reused)
    for skill in todo:
        entries[skill.skill_key] = _compile_skill(skill, checked[skill.skill_key], f"skills/{modules[skill.skill_key]}.py",
                                                  out, result)
        done += 1
        if progress is not None:
            progress(done, len(skills), skill.skill_key)
    reused = set(result.reused)
    for key, entry in entries.items():
        if entry["status"] != "ok":
            result.rejected[key] = entry["diagnostics"]
        elif key in reused:
            result.unchanged.append(entry["module"])
    files = {s.skill_key: s.source.contract_file for s in studio.skills if s.source and s.source.contract_file}
    # Templates are kept per agent by their input hash (_agent_hash); a new generator rebuilds all.
    agents_out = _build_agents(studio, entries, out, result, files, old.get("agents", {}) if same_generator else {}, old_stamps)
    if studio.refused:  # agents the border refused at the source: left out, reported (SC506)
        from skillc.compiler.frontend import refusal_diagnostic

        result.diagnostics.extend(refusal_diagnostic(r) for r in studio.refused)
    manifest = {"compiler_version": codegen.COMPILER_VERSION, "skills": entries, "agents": agents_out}
    _remove_stale(out, manifest, result)
    _write_manifest(out, manifest, old, result)
    if result.stamps != old_stamps or result.notes != old_notes or not same_generator:
        try:
            # ASCII, so a diagnostic quoting a name that is not UTF-8 (a lone surrogate) is kept too
            (out / STAMPS).write_text(json.dumps({"generator": generator, "files": result.stamps, "diagnostics": result.notes},
                                                 separators=(",", ":")), encoding="ascii")
        except OSError:
            pass  # only a cache
    result.manifest = manifest
    return result


def _active(studio: ir.Studio) -> ir.Studio:
    """Only ACTIVE profiles load (§1.1); sources have already dropped disabled bindings."""
    return ir.Studio(
        agents=[a for a in studio.agents if a.status == "ACTIVE"],
        skills=[s for s in studio.skills if s.status == "ACTIVE"],
        origin=studio.origin,
        refused=studio.refused,
    )


def _reuse_unchanged(
    skills: dict[str, ir.SkillProfile], modules: dict[str, str], old_skills: dict[str, Any], out: Path,
    old_stamps: dict[str, list[Any]], old_notes: dict[str, list[dict[str, Any]]], result: BuildResult, *, force: bool,
) -> tuple[dict[str, dict[str, Any]], list[ir.SkillProfile]]:
    """(the previous manifest entries of skills whose inputs and module file are unchanged, the
    skills to compile); reused skills' diagnostics are replayed into `result`."""
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
            and (prev.get("status") != "ok" or _intact(out, rel, prev.get("module_sha256"), old_stamps, result))
        ):
            entries[key] = prev
            result.reused.append(key)
            if prev.get("diagnostics"):
                # the manifest keeps codes and places only; the file, the excerpt and the help an
                # unchanged build must still show come from the cache, or from the front end run
                # again on this one skill
                result.diagnostics.extend(_replayed(skill, old_notes, result))
        else:
            todo.append(skill)
    return entries, todo


def _replayed(skill: ir.SkillProfile, old_notes: dict[str, list[dict[str, Any]]], result: BuildResult) -> list[Diagnostic]:
    """An unchanged skill's diagnostics, whole: from the cache, else (missing or unreadable) from
    the front end run again on it; kept in `result.notes` for the next build either way."""
    key = _notes_key(skill)
    notes = old_notes.get(key)
    found: list[Diagnostic] | None = None
    if isinstance(notes, list):
        try:
            found = [Diagnostic.model_validate(n) for n in notes]
        except ValueError:  # a hand-edited or older cache: only costs the parse
            found = None
    if found is None:
        found = _front_end([skill])[skill.skill_key][1]
    result.notes[key] = [d.model_dump() for d in found]
    return found


def _compile_skill(skill: ir.SkillProfile, checked: tuple[ir.Contract | None, list[Diagnostic]], rel: str, out: Path,
                   result: BuildResult) -> dict[str, Any]:
    """One skill's manifest entry: its module generated and written to `rel` when the front end
    accepted the contract, else rejected with the diagnostics."""
    key = skill.skill_key
    contract, own = checked
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
        except UnsafeLiteral as exc:
            own.append(Diagnostic(code=CODEGEN_FAILED, severity="error", message=f"cannot generate code: {exc}", skill=key))
        else:
            _write(out, rel, text, result)
            entry.update(module=rel, module_sha256=_sha(text), status="ok", facts=graphs.skill_facts(skill, contract))
    entry["diagnostics"] = [_diag_record(d) for d in own]
    if own:
        result.notes[_notes_key(skill)] = [d.model_dump() for d in own]
    result.regenerated.append(key)
    result.diagnostics.extend(own)
    return entry


def _write_manifest(out: Path, manifest: dict[str, Any], old: dict[str, Any], result: BuildResult) -> None:
    """Write manifest.json unless it already holds exactly `manifest`."""
    if manifest == old and (out / MANIFEST).is_file():
        result.unchanged.append(MANIFEST)  # nothing to encode: the file holds exactly this
    else:
        _write(out, MANIFEST, _manifest_text(manifest), result)
        result.stamps.pop(MANIFEST, None)


def _intact(out: Path, rel: str, digest: str | None, stamps: dict[str, list[Any]], result: BuildResult) -> bool:
    """The file holds what the manifest says: by its stamp when the cache knows it, else by hash."""
    if digest is None:
        return False
    path = os.path.join(out, rel)  # plain strings: pathlib's joining was a third of a no-op build
    try:
        st = os.stat(path)
        stamp = [st.st_mtime_ns, st.st_size, digest]
        if stamps.get(rel) == stamp or hashlib.sha256(Path(path).read_bytes()).hexdigest() == digest:
            result.stamps[rel] = stamp
            return True
    except OSError:
        pass
    return False


def _keys_digest(entries: dict[str, dict[str, Any]]) -> str:
    """What an agent's template reads of the skills outside it: which keys exist and which load."""
    return _sha(json.dumps(sorted((k, e["status"] == "ok") for k, e in entries.items())))


def _agent_hash(agent: ir.AgentProfile, entries: dict[str, dict[str, Any]], keys: str) -> str:
    """An agent's template is a function of its profile, its own skills' inputs (their facts) and
    the studio's key set (`keys`): an edit to a skill of another agent leaves it as it is. (No
    file paths: the hash is committed with generated/ and must not depend on the checkout.)"""
    own = [(k, entries[k]["input_sha256"], entries[k]["status"]) for k in sorted(set(agent.skills)) if k in entries]
    data = [codegen.COMPILER_VERSION, agent.model_dump(mode="json", exclude={"source"}), own, keys]
    return _sha(json.dumps(data, ensure_ascii=False, sort_keys=True, default=str))


def _build_agents(
    studio: ir.Studio, entries: dict[str, dict[str, Any]], out: Path, result: BuildResult, files: dict[str, str],
    old: dict[str, Any], stamps: dict[str, list[Any]],
) -> dict[str, Any]:
    """One graph template per agent; `old` holds the previous manifest's agents (an agent whose
    input hash and file are unchanged is not rebuilt)."""
    facts = {k: e["facts"] for k, e in entries.items() if e["status"] == "ok"}
    all_keys = frozenset(entries)
    keys = _keys_digest(entries)
    agents = sorted(studio.agents, key=lambda a: a.agent_code)
    names = file_names([a.agent_code for a in agents])
    out_agents: dict[str, Any] = {}
    for agent in agents:
        rel = f"agents/{names[agent.agent_code]}.json"
        digest = _agent_hash(agent, entries, keys)
        prev = old.get(agent.agent_code)
        if prev and prev.get("input_sha256") == digest and prev.get("graph") == rel and _intact(out, rel, prev.get("graph_sha256"), stamps, result):
            out_agents[agent.agent_code] = prev
            result.unchanged.append(rel)
            if prev.get("diagnostics"):  # told again in full (file, excerpt, help), not from the manifest's record
                result.diagnostics.extend(graphs.build_agent_graph(agent, facts, all_keys, files)[1])
            continue
        g, diags = graphs.build_agent_graph(agent, facts, all_keys, files)
        text = _json_text(graphs.graph_to_data(g))
        _write(out, rel, text, result)
        result.diagnostics.extend(diags)
        out_agents[agent.agent_code] = {
            "graph": rel,
            "graph_sha256": _sha(text),
            "input_sha256": digest,
            "skills": sorted(g.nodes),
            "diagnostics": [dict(_diag_record(d), skill=d.skill) for d in diags],
        }
    return out_agents


# What a build writes (besides the manifest): every such file not in the manifest is stale.
_OUTPUTS = (("skills", ".py"), ("agents", ".json"))


def _remove_stale(out: Path, manifest: dict[str, Any], result: BuildResult) -> None:
    keep = {e["module"] for e in manifest["skills"].values() if e.get("module")}
    keep |= {a["graph"] for a in manifest["agents"].values()}
    for folder, suffix in _OUTPUTS:
        try:
            found = sorted(n for n in os.listdir(out / folder) if n.endswith(suffix))
        except OSError:
            continue
        for name in found:
            rel = f"{folder}/{name}"
            if rel not in keep:
                (out / rel).unlink()
                result.removed.append(rel)


def _tree(root: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    for folder, pattern in (("skills", "*.py"), ("agents", "*.json"), (".", MANIFEST)):
        for path in sorted((root / folder).glob(pattern)):
            rel = path.relative_to(root).as_posix()
            # surrogateescape: DIR is whatever is on disk (hand-edited, damaged); --check diffs it
            # against a fresh compile instead of failing on bytes that are not UTF-8.
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

