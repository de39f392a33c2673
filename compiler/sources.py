"""Studio sources (§1.1): a directory, a SQLite database, an inline mapping.

Each yields an `ir.Studio` with bindings resolved: only `status=ACTIVE` agents and skills and
`enabled_flag=1` bindings load. An agent's binding to a skill that is not ACTIVE is dropped; a
binding to a key that does not exist at all is kept so the front end can warn about it (SC301).
"""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import yaml

from skillc.compiler import ir
from skillc.compiler import studio_border as sb
from skillc.runtime.words.errors import SkillcError

AGENT_FIELDS = ("agent_code", "agent_name", "identity_desc", "mission_desc", "boundary_desc", "style_desc", "principle_desc", "status")
SKILL_FIELDS = ("skill_key", "skill_name", "semantic_desc", "skill_manual", "skill_contract", "status")

SCHEMA_SQL = """
CREATE TABLE agent_profile (
    id INTEGER PRIMARY KEY,
    agent_code TEXT NOT NULL UNIQUE,
    agent_name TEXT NOT NULL DEFAULT '',
    identity_desc TEXT NOT NULL DEFAULT '',
    mission_desc TEXT NOT NULL DEFAULT '',
    boundary_desc TEXT NOT NULL DEFAULT '',
    style_desc TEXT NOT NULL DEFAULT '',
    principle_desc TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'ACTIVE'
);
CREATE TABLE skill_profile (
    id INTEGER PRIMARY KEY,
    skill_key TEXT NOT NULL UNIQUE,
    skill_name TEXT NOT NULL DEFAULT '',
    semantic_desc TEXT NOT NULL DEFAULT '',
    skill_manual TEXT NOT NULL DEFAULT '',
    skill_contract TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'ACTIVE'
);
CREATE TABLE agent_skill_binding (
    id INTEGER PRIMARY KEY,
    agent_id INTEGER NOT NULL REFERENCES agent_profile(id),
    skill_id INTEGER NOT NULL REFERENCES skill_profile(id),
    enabled_flag INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE skill_tool_binding (
    id INTEGER PRIMARY KEY,
    skill_id INTEGER NOT NULL REFERENCES skill_profile(id),
    tool_name TEXT NOT NULL,
    enabled_flag INTEGER NOT NULL DEFAULT 1
);
"""


class SourceError(SkillcError):
    """A studio source that cannot be read at all (missing, unreadable, malformed)."""


def _active(status: object) -> bool:
    return status == "ACTIVE"


def _finish(agents: list[ir.AgentProfile], skills: list[ir.SkillProfile], all_keys: set[str], origin: str,
            refused: list[ir.Refusal] | None = None) -> ir.Studio:
    """Keep ACTIVE records; drop agent bindings to skills that exist but are not ACTIVE."""
    active = [s for s in skills if _active(s.status)]
    active_keys = {s.skill_key for s in active}
    inactive = all_keys - active_keys
    kept = []
    for a in agents:
        if _active(a.status):
            kept.append(a.model_copy(update={"skills": [k for k in a.skills if k not in inactive]}))
    return ir.Studio(agents=kept, skills=active, origin=origin, refused=refused or [])


def _skill(fields: dict[str, str], tools: list[str], source: ir.SourceRef, refusal: ir.Refusal | None) -> ir.SkillProfile:
    """A skill record; one whose text the border refused keeps cleaned copies of its fields and
    the refusal, so the front end rejects it (SC506) and agents bound to it still resolve."""
    if refusal is None:
        return ir.SkillProfile(**fields, tool_names=tools, source=source)
    return ir.SkillProfile(**sb.clean_fields(fields), tool_names=list(sb.clean_fields({str(i): t for i, t in enumerate(tools)}).values()),
                           source=source.model_copy(update={"refusal": refusal}))


def _agent_refused(refusal: ir.Refusal | None, status: str, refused: list[ir.Refusal]) -> bool:
    """True when the agent is refused (then left out; an ACTIVE one is reported as SC506)."""
    if refusal is None:
        return False
    if status == "ACTIVE":
        refused.append(refusal)
    return True


def _str_fields(data: dict[str, Any], fields: tuple[str, ...], where: str, *, lenient: bool = False) -> dict[str, str]:
    """The text fields of a record; a wrong-typed one raises, or is left out when `lenient` (a
    directory studio: compiler.authoring reports it with its position)."""
    out = {}
    for f in fields:
        v = data.get(f)
        if v is None:
            continue
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            if lenient:
                continue
            raise SourceError(f"{where}: {f} must be text, found {type(v).__name__}")
        out[f] = str(v)
    return out


def _str_list(value: Any, where: str, *, lenient: bool = False) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in value):
        if lenient:
            return []
        raise SourceError(f"{where} must be a list of names")
    return [str(x) for x in value]


# ---------------------------------------------------------------- directory


def _read_yaml(path: Path, root: Path) -> dict[str, Any]:
    """A record's YAML mapping; `sb.Unreadable` when the file is not UTF-8 or too long (SC506) or
    not a YAML mapping (SC507): that one record is refused and the rest of the studio is read."""
    try:
        text = sb.read_file(path, root)
        data = yaml.safe_load(text)
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise sb.Unreadable(f"invalid YAML: {getattr(exc, 'problem', None) or exc}", line, column,
                            text if mark else None, code=sb.NOT_YAML) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise sb.Unreadable(f"a YAML {type(data).__name__}, not a mapping of fields", code=sb.NOT_YAML)
    return data


def _read_text(path: Path, root: Path) -> str:
    """manual.md or contract.jsonc ("" when absent); `sb.Unreadable` when the border refuses it
    (a link out of the studio folder `root` included)."""
    try:
        return sb.read_file(path, root)
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _yaml_place(path: Path) -> Any:
    """Where a field of a YAML record stands (for a refusal's position)."""
    from skillc.compiler.authoring import yaml_span

    return lambda place: yaml_span(path, place, key=False)


def _unreadable(kind: sb.Kind, key: str, path: Path, exc: sb.Unreadable) -> ir.Refusal:
    span = ir.Span(line=exc.line, column=exc.column, end_line=exc.line, end_column=exc.column + 1)
    return sb.refusal(kind, key, f"{path.name}: {exc.message}: the {kind} cannot be read and is dropped", str(path),
                      text=exc.text, span=span if exc.text is not None else None, code=exc.code)


def _dir_skill(d: Path, root: Path) -> ir.SkillProfile | None:
    """One skills/<key>/ folder of the studio `root` as a record (None for a stray folder without
    skill.yaml)."""
    meta_path = d / "skill.yaml"
    if not meta_path.exists() and not meta_path.is_symlink():
        return None
    contract_path = d / "contract.jsonc"
    source = ir.SourceRef(origin=str(meta_path), contract_file=str(contract_path))
    key = d.name
    if sb.problem(key) is not None:  # a folder name of bytes that are not UTF-8
        return _skill({"skill_key": key}, [], source, sb.refusal(
            "skill", key, f"{sb.problem(key)} in the folder name (the skill_key): the skill cannot be read and is dropped",
            str(meta_path)))
    try:
        meta = _read_yaml(meta_path, root)
    except sb.Unreadable as exc:
        return _skill({"skill_key": key}, [], source, _unreadable("skill", key, meta_path, exc))
    fields = _str_fields(meta, SKILL_FIELDS, str(meta_path), lenient=True)
    fields["skill_key"] = key
    tools = _str_list(meta.get("tools"), f"{meta_path}: tools", lenient=True)
    refusal: ir.Refusal | None = sb.record_refusal("skill", key, fields, {"tools": tools}, str(meta_path), _yaml_place(meta_path))
    # The files beside skill.yaml win over the same fields written inside it (SC505).
    for field, path in (("skill_manual", d / "manual.md"), ("skill_contract", contract_path)):
        try:
            fields[field] = _read_text(path, root) or fields.get(field, "")
        except sb.Unreadable as exc:
            refusal = refusal or _unreadable("skill", key, path, exc)
            fields[field] = ""
    return _skill(fields, tools, source, refusal)


def _load_directory(root: Path) -> ir.Studio:
    agents: list[ir.AgentProfile] = []
    skills: list[ir.SkillProfile] = []
    skills_dir = root / "skills"
    agents_dir = root / "agents"
    if not skills_dir.is_dir() and not agents_dir.is_dir():
        raise SourceError(f"{root}: not a studio directory (expected agents/ and skills/)")
    if skills_dir.is_dir():
        for d in sorted(p for p in skills_dir.iterdir() if p.is_dir()):
            skill = _dir_skill(d, root)
            if skill is not None:
                skills.append(skill)
    refused: list[ir.Refusal] = []
    if agents_dir.is_dir():
        for f in sorted(agents_dir.glob("*.yaml")):
            refusal = None
            try:
                data = _read_yaml(f, root) if sb.problem(f.stem) is None else {}
            except sb.Unreadable as exc:
                data, refusal = {}, _unreadable("agent", f.stem, f, exc)
            fields = _str_fields(data, AGENT_FIELDS, str(f), lenient=True)
            fields.setdefault("agent_code", f.stem)
            names = _str_list(data.get("skills"), f"{f}: skills", lenient=True)
            if sb.problem(f.stem) is not None:
                refusal = sb.refusal("agent", f.stem, f"{sb.problem(f.stem)} in the file name (the agent_code): the agent "
                                     "cannot be read and is dropped", str(f))
            refusal = refusal or sb.record_refusal("agent", fields["agent_code"], fields, {"skills": names}, str(f), _yaml_place(f))
            if not _agent_refused(refusal, fields.get("status", "ACTIVE"), refused):
                agents.append(ir.AgentProfile(**fields, skills=names, source=ir.SourceRef(origin=str(f))))
    return _finish(agents, skills, {s.skill_key for s in skills}, str(root), refused)


# ---------------------------------------------------------------- SQLite


def _load_sqlite(path: Path) -> ir.Studio:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise SourceError(f"{path}: cannot open as SQLite: {exc}") from None
    con.row_factory = sqlite3.Row
    # Bytes that are not UTF-8 in a TEXT column would fail the whole query; decoded with
    # surrogateescape they reach the border below, which refuses that one record (SC506).
    con.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
    try:
        try:
            agent_rows = con.execute("SELECT * FROM agent_profile ORDER BY id").fetchall()
            skill_rows = con.execute("SELECT * FROM skill_profile ORDER BY id").fetchall()
            ask = con.execute("SELECT agent_id, skill_id FROM agent_skill_binding WHERE enabled_flag = 1 ORDER BY id").fetchall()
            stb = con.execute("SELECT skill_id, tool_name FROM skill_tool_binding WHERE enabled_flag = 1 ORDER BY id").fetchall()
        except sqlite3.DatabaseError as exc:
            raise SourceError(f"{path}: not a studio database ({exc}); expected tables agent_profile, skill_profile, agent_skill_binding, skill_tool_binding") from None
    finally:
        con.close()
    tools: dict[int, list[str]] = {}
    for r in stb:
        tools.setdefault(r["skill_id"], []).append(r["tool_name"])
    key_of: dict[int, str] = {}
    skills = []
    for r in skill_rows:
        row = {k: r[k] for k in r.keys()}
        fields = {f: "" if row.get(f) is None else str(row[f]) for f in SKILL_FIELDS if f in row}
        if not fields.get("skill_key"):
            raise SourceError(f"{path}: skill_profile row id={row.get('id')} has no skill_key")
        origin = f"{path}#skill_profile/{row['id']}"
        names = tools.get(row["id"], [])
        refusal = sb.record_refusal("skill", fields["skill_key"], fields, {"tools": names}, origin)
        skill = _skill(fields, names, ir.SourceRef(origin=origin, contract_file=f"{path}#{fields['skill_key']}"), refusal)
        key_of[row["id"]] = skill.skill_key
        skills.append(skill)
    bound: dict[int, list[str]] = {}
    for r in ask:
        if r["skill_id"] in key_of:
            bound.setdefault(r["agent_id"], []).append(key_of[r["skill_id"]])
    agents = []
    refused: list[ir.Refusal] = []
    for r in agent_rows:
        row = {k: r[k] for k in r.keys()}
        fields = {f: "" if row.get(f) is None else str(row[f]) for f in AGENT_FIELDS if f in row}
        origin = f"{path}#agent_profile/{row['id']}"
        refusal = sb.record_refusal("agent", fields.get("agent_code", ""), fields, {}, origin)
        if not _agent_refused(refusal, fields.get("status", "ACTIVE"), refused):
            agents.append(ir.AgentProfile(**fields, skills=bound.get(row["id"], []), source=ir.SourceRef(origin=origin)))
    return _finish(agents, skills, set(key_of.values()), str(path), refused)


def write_studio_sqlite(studio: ir.Studio, path: str | os.PathLike[str]) -> None:
    """Create a SQLite file holding `studio` in the four tables of §1.1 (replacing any file there)."""
    p = Path(path)
    if p.exists():
        p.unlink()
    con = sqlite3.connect(p)
    try:
        con.executescript(SCHEMA_SQL)
        skill_ids: dict[str, int] = {}
        for s in studio.skills:
            cur = con.execute(
                "INSERT INTO skill_profile (skill_key, skill_name, semantic_desc, skill_manual, skill_contract, status) VALUES (?, ?, ?, ?, ?, ?)",
                (s.skill_key, s.skill_name, s.semantic_desc, s.skill_manual, s.skill_contract, s.status),
            )
            skill_ids[s.skill_key] = int(cur.lastrowid or 0)
            con.executemany("INSERT INTO skill_tool_binding (skill_id, tool_name, enabled_flag) VALUES (?, ?, 1)", [(cur.lastrowid, t) for t in s.tool_names])
        for a in studio.agents:
            cur = con.execute(
                "INSERT INTO agent_profile (agent_code, agent_name, identity_desc, mission_desc, boundary_desc, style_desc, principle_desc, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (a.agent_code, a.agent_name, a.identity_desc, a.mission_desc, a.boundary_desc, a.style_desc, a.principle_desc, a.status),
            )
            con.executemany(
                "INSERT INTO agent_skill_binding (agent_id, skill_id, enabled_flag) VALUES (?, ?, 1)",
                [(cur.lastrowid, skill_ids[k]) for k in a.skills if k in skill_ids],
            )
        con.commit()
    finally:
        con.close()


# ---------------------------------------------------------------- inline mapping and dispatch


def studio_from_mapping(data: dict[str, Any], *, origin: str) -> ir.Studio:
    """A studio from the scenario format's inline `studio:` (docs/reference/scenarios.md).

    Agents carry `skills: [skill_key, ...]`, skills carry `tools:` (toolNames) and `contract:`
    (the skill_contract text; `skill_contract:` is accepted too). Positions in diagnostics refer
    to the contract text, labelled `<origin>#<skill_key>`.
    """
    if not isinstance(data, dict):
        raise SourceError(f"{origin}: studio must be a mapping with agents and skills")
    raw_skills = data.get("skills") or []
    raw_agents = data.get("agents") or []
    if not isinstance(raw_skills, list) or not isinstance(raw_agents, list):
        raise SourceError(f"{origin}: studio.agents and studio.skills must be lists")
    skills = []
    for i, s in enumerate(raw_skills):
        where = f"{origin}: studio.skills[{i}]"
        if not isinstance(s, dict) or not s.get("skill_key"):
            raise SourceError(f"{where}: a skill needs a skill_key")
        fields = _str_fields(s, SKILL_FIELDS, where)
        contract = s.get("contract", s.get("skill_contract", ""))
        if not isinstance(contract, str):
            raise SourceError(f"{where}: contract must be the contract's text (a YAML block string)")
        fields["skill_contract"] = contract
        names = _str_list(s.get("tools"), f"{where}.tools")
        # No positions in a mapping: a refusal points at line 1 of the origin and names the field.
        refusal = sb.record_refusal("skill", fields["skill_key"], fields, {"tools": names}, f"{origin}#studio.skills[{i}]")
        skills.append(_skill(fields, names, ir.SourceRef(origin=where, contract_file=f"{origin}#{fields['skill_key']}"), refusal))
    agents = []
    refused: list[ir.Refusal] = []
    for i, a in enumerate(raw_agents):
        where = f"{origin}: studio.agents[{i}]"
        if not isinstance(a, dict) or not a.get("agent_code"):
            raise SourceError(f"{where}: an agent needs an agent_code")
        fields = _str_fields(a, AGENT_FIELDS, where)
        names = _str_list(a.get("skills"), f"{where}.skills")
        refusal = sb.record_refusal("agent", fields["agent_code"], fields, {"skills": names}, f"{origin}#studio.agents[{i}]")
        if not _agent_refused(refusal, fields.get("status", "ACTIVE"), refused):
            agents.append(ir.AgentProfile(**fields, skills=names, source=ir.SourceRef(origin=where)))
    return _finish(agents, skills, {s.skill_key for s in skills}, origin, refused)


def load_studio(source: str | os.PathLike[str]) -> ir.Studio:
    """Read a studio from a directory (agents/, skills/) or a SQLite file; SourceError if unreadable."""
    p = Path(source)
    if p.is_dir():
        return _load_directory(p)
    if not p.exists():
        raise SourceError(f"{p}: no such file or directory")
    try:
        with p.open("rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise SourceError(f"{p}: cannot read: {exc.strerror}") from None
    if head != b"SQLite format 3\x00":
        raise SourceError(f"{p}: not a studio directory or SQLite database")
    return _load_sqlite(p)
