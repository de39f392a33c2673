"""Load a compiled studio: the validator modules and agent graph templates `skillc compile` wrote.

The runtime never imports the compiler: modules are imported from their files with importlib
(each under a unique module name, so two loaded versions of a skill never collide, and a file stem
such as `cms.article.find` need not be an identifier); a path in the manifest that leads outside
the directory is refused. Graph templates are node-link JSON: a turn reads only the agent's
profile, skills, delegation catalog and provider inputs (edges and `unavailable_inputs`, as the
compiler decided them) from it, so the networkx graph (`AgentTemplate.graph`, for `skillc graph`
and the console) is built, and networkx imported (~100+ ms), only when asked for.
`CompiledStudio.refresh()` runs every turn: it re-reads manifest.json and re-imports only the
modules whose hash changed. With a `source` (compile-on-load, by the `StudioCompiler` the caller
passes: the CLI's uses the compiler extra) it first rebuilds the directory incrementally, so a turn
costs one hash comparison per unchanged skill.
"""
from __future__ import annotations

import hashlib
import importlib.util
import itertools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from skillc.runtime.words.errors import SkillcError

if TYPE_CHECKING:
    import networkx as nx

MANIFEST = "manifest.json"
_counter = itertools.count()


class CompiledStudioError(SkillcError, RuntimeError):
    """The compiled directory is missing, unreadable, or a module in it fails to import."""


@dataclass(frozen=True)
class ProviderInput:
    """One input of a skill that names a provider (§7), as the compiler decided it: `reason` is
    None when the provider edge stands, else why the input is unavailable (`self`, `other_agent`,
    `unknown`, `cycle`). `prefix`/`share_key` say where its value is shared (None when not)."""

    input: str
    provider: str
    prefix: str | None = None
    share_key: tuple[tuple[Any, ...], ...] | None = None
    reason: str | None = None


@dataclass(frozen=True)
class AgentTemplate:
    """One agent: its profile, its loadable skills and task-graph template (§7, §15)."""

    agent_code: str
    agent_name: str
    identity_desc: str
    mission_desc: str
    boundary_desc: str
    style_desc: str
    principle_desc: str
    skills: tuple[str, ...]
    delegation_catalog: tuple[str, ...]
    # consumer skill -> its provider inputs in contract order (what the planner inserts, §7)
    providers: dict[str, tuple[ProviderInput, ...]] = field(default_factory=dict, compare=False)
    graph_data: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def graph(self) -> nx.DiGraph:
        """The task-graph template as a networkx graph (skills as nodes, provider → consumer
        edges), built on first use: networkx is imported here, not when a studio loads."""
        import networkx as nx

        return nx.node_link_graph(self.graph_data, directed=True, multigraph=False, edges="edges")


class StudioCompiler(Protocol):
    """Compile-on-load, given by the caller (the CLI passes `skillc`'s own): rebuild `out_dir` from
    a studio source, a studio directory or SQLite file or a studio service's document
    (`{"agents", "skills"}`, named by `origin`). The runtime never imports the compiler, not even
    by name, so a deployed runtime depends on neither it nor Lark; an ImportError from the callable
    means the compiler extra is missing."""

    def __call__(self, source: str | os.PathLike[str] | Mapping[str, Any], out_dir: Path, *,
                 origin: str | None = None) -> None: ...


def _compile_on_load(compiler: StudioCompiler | None, source: str | os.PathLike[str], out_dir: Path) -> None:
    """Rebuild `out_dir` from a studio source with the compiler the caller gave."""
    if compiler is None:
        raise CompiledStudioError(
            f"compiling {source} on load needs a compiler (`compiler=`; the skillc command passes its own); "
            "or compile ahead of time with `skillc compile` and load the directory")
    try:
        compiler(source, out_dir)
    except ImportError as exc:
        raise CompiledStudioError(
            f"compiling {source} on load needs the compiler extra (pip install 'skillc[compiler]'); "
            "or compile ahead of time with `skillc compile` and load the directory") from exc


def _import(path: Path, key: str) -> ModuleType:
    name = f"skillc_compiled_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CompiledStudioError(f"cannot import the module of skill {key!r} from {path}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a broken or hand-edited file: say which skill
        raise CompiledStudioError(f"the module of skill {key!r} ({path}) fails to import: {exc}") from exc
    return module


def _agent(code: str, data: dict[str, Any]) -> AgentTemplate:
    """The template of one agent from its node-link JSON, read without networkx."""
    attrs = data.get("graph") or {}
    nodes = data.get("nodes") or []
    return AgentTemplate(
        agent_code=code,
        agent_name=attrs.get("agent_name", ""),
        identity_desc=attrs.get("identity_desc", ""),
        mission_desc=attrs.get("mission_desc", ""),
        boundary_desc=attrs.get("boundary_desc", ""),
        style_desc=attrs.get("style_desc", ""),
        principle_desc=attrs.get("principle_desc", ""),
        skills=tuple(sorted(n["id"] for n in nodes)),
        delegation_catalog=tuple(attrs.get("delegation_catalog", ())),
        providers=_providers(data),
        graph_data=data,
    )


def _providers(data: dict[str, Any]) -> dict[str, tuple[ProviderInput, ...]]:
    """Per consumer skill, its provider inputs from the template's edges and unavailable inputs,
    in contract order (`position`; a template written before it had one keeps file order)."""
    found: dict[str, list[tuple[int, int, ProviderInput]]] = {}
    seq = itertools.count()
    for edge in data.get("edges") or []:
        for link in edge.get("inputs") or []:
            key = link.get("share_key")
            found.setdefault(edge["target"], []).append((link.get("position", 1 << 30), next(seq), ProviderInput(
                link["input"], edge["source"], link.get("prefix"),
                tuple(tuple(p) for p in key) if key else None)))
    for node in data.get("nodes") or []:
        for item in node.get("unavailable_inputs") or []:
            found.setdefault(node["id"], []).append((item.get("position", 1 << 30), next(seq), ProviderInput(
                item["input"], item["provider"], reason=item.get("reason") or "unavailable")))
    return {k: tuple(p for _, _, p in sorted(v, key=lambda t: (t[0], t[1]))) for k, v in found.items()}


@dataclass
class CompiledStudio:
    """The loaded form of a compiled directory; `refresh()` keeps it current."""

    out_dir: Path
    source: str | os.PathLike[str] | None = None
    compiler: StudioCompiler | None = field(default=None, repr=False)  # compile-on-load, with `source`
    manifest: dict[str, Any] = field(default_factory=dict)
    skills: dict[str, ModuleType] = field(default_factory=dict)
    agents: dict[str, AgentTemplate] = field(default_factory=dict)
    rejected: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _module_sha: dict[str, str] = field(default_factory=dict, repr=False)
    _graph_sha: dict[str, str] = field(default_factory=dict, repr=False)
    _manifest_stamp: tuple[int, int, int] | None = field(default=None, repr=False)
    _manifest_path: str = field(default="", repr=False)

    def _manifest_name(self) -> str:
        self._manifest_path = os.fspath(self.out_dir / MANIFEST)
        return self._manifest_path

    def refresh(self) -> bool:
        """Re-read the manifest (after rebuilding from `source`, when set); re-import changed
        modules and graphs only. Returns True when anything changed."""
        if self.source is not None:
            _compile_on_load(self.compiler, self.source, self.out_dir)
        try:
            st = os.stat(self._manifest_path or self._manifest_name())  # every turn: no Path join here
        except OSError as exc:
            raise CompiledStudioError(f"no compiled studio in {self.out_dir} (run `skillc compile`)") from exc
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp == self._manifest_stamp:
            return False
        path = self.out_dir / MANIFEST
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise CompiledStudioError(f"{path} is not valid JSON: {exc}") from exc
        changed = self._apply(manifest)
        self._manifest_stamp = stamp
        return changed

    def _inside(self, rel: str, key: str) -> Path:
        """The file `rel` of the manifest, which must stay inside the compiled directory."""
        root = self.out_dir.resolve()
        path = (root / rel).resolve()
        if root not in path.parents:
            raise CompiledStudioError(f"the manifest names {rel!r} for {key!r}, outside {self.out_dir}")
        return path

    def _apply(self, manifest: dict[str, Any]) -> bool:
        changed = False
        skills: dict[str, ModuleType] = {}
        shas: dict[str, str] = {}
        rejected: dict[str, list[dict[str, Any]]] = {}
        for key, entry in sorted(manifest.get("skills", {}).items()):
            if entry.get("status") != "ok" or not entry.get("module"):
                rejected[key] = [
                    {"code": d.get("code"), "message": d.get("message")}
                    for d in entry.get("diagnostics", [])
                    if d.get("severity", "error") == "error"
                ]
                continue
            sha = entry.get("module_sha256") or ""
            if key in self.skills and self._module_sha.get(key) == sha:
                skills[key] = self.skills[key]
            else:
                file = self._inside(entry["module"], key)
                if sha and hashlib.sha256(file.read_bytes()).hexdigest() != sha:
                    raise CompiledStudioError(f"{file} does not match the manifest (edited by hand? run `skillc compile`)")
                skills[key] = _import(file, key)
                changed = True
            shas[key] = sha
        agents: dict[str, AgentTemplate] = {}
        graph_shas: dict[str, str] = {}
        for code, entry in sorted(manifest.get("agents", {}).items()):
            sha = entry.get("graph_sha256") or ""
            if code in self.agents and self._graph_sha.get(code) == sha:
                agents[code] = self.agents[code]
            else:
                data = json.loads(self._inside(entry["graph"], code).read_text(encoding="utf-8"))
                agents[code] = _agent(code, data)
                changed = True
            graph_shas[code] = sha
        changed = changed or set(skills) != set(self.skills) or set(agents) != set(self.agents) or rejected != self.rejected
        self.manifest, self.skills, self.agents, self.rejected = manifest, skills, agents, rejected
        self._module_sha, self._graph_sha = shas, graph_shas
        return changed


def load_compiled(out_dir: str | os.PathLike[str], *, source: str | os.PathLike[str] | None = None,
                  compiler: StudioCompiler | None = None) -> CompiledStudio:
    """Load a directory written by `skillc compile`. With `source` (compile-on-load), the
    directory is first rebuilt from that studio source by `compiler`, and again on every
    `refresh()`."""
    studio = CompiledStudio(out_dir=Path(out_dir), source=source, compiler=compiler)
    studio.refresh()
    return studio
