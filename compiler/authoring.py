"""Authoring checks of a directory studio's YAML files, with positions (file:line:col).

`agents/<code>.yaml` and `skills/<key>/skill.yaml` are validated against a small schema: an
unknown key is a warning with a "did you mean", a value of the wrong type an error, a status that
is ACTIVE in another case a warning (the record silently would not load, §1.1, enums are
case-sensitive), a skill without a manual a warning, a field of skill.yaml shadowed by the file beside it
(manual.md, contract.jsonc) a warning. `yaml_span` finds where a key or item stands, for other checks
(SC301/SC302 point at an agent's `skills:`).
"""
from __future__ import annotations

import difflib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import yaml

from skillc.compiler import ir
from skillc.compiler.diagnostics import Diagnostic, Severity, make

TEXT = "text"
NAMES = "a list of names"

# The keys each file may hold and the kind of value each takes.
AGENT_SCHEMA: dict[str, str] = {
    "agent_code": TEXT, "agent_name": TEXT, "identity_desc": TEXT, "mission_desc": TEXT, "boundary_desc": TEXT,
    "style_desc": TEXT, "principle_desc": TEXT, "status": TEXT, "skills": NAMES,
}
SKILL_SCHEMA: dict[str, str] = {
    "skill_key": TEXT, "skill_name": TEXT, "semantic_desc": TEXT, "status": TEXT, "tools": NAMES,
    "skill_manual": TEXT, "skill_contract": TEXT,
}
# Keys people write for these fields, from other tools' vocabularies or the README of old.
ALIASES: dict[str, tuple[str, ...]] = {
    "name": ("skill_name", "agent_name"), "code": ("agent_code",), "agent": ("agent_code",), "key": ("skill_key",),
    "description": ("semantic_desc", "mission_desc"), "toolNames": ("tools",), "tool_names": ("tools",),
    "manual": ("skill_manual",), "contract": ("skill_contract",),
}

UNKNOWN_KEY = "SC501"
WRONG_TYPE = "SC502"
STATUS_CASE = "SC503"
NO_MANUAL = "SC504"
SHADOWED = "SC505"


def near(name: str, candidates: Iterable[str]) -> str | None:
    """The closest of `candidates` to `name` (difflib, cutoff 0.6), or None."""
    return _near(name, candidates if isinstance(candidates, frozenset) else frozenset(candidates))


# One difflib pass over a studio's keys costs ~50 ms at 1,000 skills, and a studio asks the same
# question once per agent and per skill that names the same unknown key: answers are kept per
# (name, candidate set), i.e. per studio version of that key set. Bounded; a frozenset caches its
# own hash, so a hit costs a dictionary look-up.
@lru_cache(maxsize=512)
def _near(name: str, candidates: frozenset[str]) -> str | None:
    got = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.6)
    return got[0] if got else None


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """`did you mean 'x'?` for the closest candidate, or None."""
    close = near(name, candidates)
    return f"did you mean '{close}'?" if close else None


@lru_cache(maxsize=256)
def _compose(path: str, mtime: float) -> tuple[str, yaml.Node | None]:
    text = Path(path).read_text(encoding="utf-8")
    try:
        return text, yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return text, None


def _node_span(node: yaml.Node) -> ir.Span:
    s, e = node.start_mark, node.end_mark
    end_col = e.column + 1 if e.line == s.line else s.column + 2
    return ir.Span(line=s.line + 1, column=s.column + 1, end_line=s.line + 1, end_column=max(end_col, s.column + 2),
                   start=s.index, end=e.index)


def yaml_span(path: str | Path, place: tuple[str | int, ...], *, key: bool = True) -> tuple[str, ir.Span] | None:
    """The text of a YAML file and the span of the value at `place` (of its key when `key` and the
    last part is a mapping key); None when the file or the place does not exist."""
    p = Path(path)
    try:
        text, node = _compose(str(p), p.stat().st_mtime)
    except (OSError, UnicodeDecodeError):
        return None
    found: yaml.Node | None = node
    key_node: yaml.Node | None = None
    for part in place:
        if isinstance(found, yaml.MappingNode):
            pair = next(((k, v) for k, v in found.value if k.value == part), None)
            key_node, found = pair if pair else (None, None)
        elif isinstance(found, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(found.value):
            key_node, found = None, found.value[part]
        else:
            found = None
        if found is None:
            return None
    target = key_node if key and key_node is not None else found
    return (text, _node_span(target)) if target is not None else None


class _Linter:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.diags: list[Diagnostic] = []

    def _d(self, code: str, severity: Severity, message: str, file: Path, text: str | None, span: ir.Span | None,
           skill: str | None = None, help: str | None = None) -> None:
        self.diags.append(make(code, severity, message, text=text, span=span, skill=skill, file=str(file), help=help))

    def _mapping(self, path: Path) -> tuple[str, yaml.MappingNode] | None:
        from skillc.compiler.studio_border import leaves

        if leaves(path, self.root):
            return None  # a link out of the studio: the loader refuses it (SC506), it is never read
        try:
            text, node = _compose(str(path), path.stat().st_mtime)
        except (OSError, UnicodeDecodeError):
            return None  # the loader reports unreadable files
        return (text, node) if isinstance(node, yaml.MappingNode) else None

    def _schema(self, path: Path, schema: dict[str, str], what: str, skill: str | None) -> dict[str, yaml.Node]:
        """Check keys and value kinds; returns the known keys' value nodes."""
        got = self._mapping(path)
        if got is None:
            return {}
        text, root = got
        seen: dict[str, yaml.Node] = {}
        for k, v in root.value:
            name = str(k.value)
            if name not in schema:
                hint = next((a for a in ALIASES.get(name, ()) if a in schema), None) or near(name, schema)
                help = f"did you mean '{hint}'?" if hint else f"the keys of {what} are: {', '.join(schema)}"
                self._d(UNKNOWN_KEY, "warning", f"unknown key '{name}' in {what} is ignored", path, text, _node_span(k),
                        skill, help)
                continue
            seen[name] = v
            want = schema[name]
            if isinstance(v, yaml.ScalarNode) and v.tag == "tag:yaml.org,2002:null":
                continue
            ok = (isinstance(v, yaml.ScalarNode) and v.tag != "tag:yaml.org,2002:bool") if want == TEXT else (
                isinstance(v, yaml.SequenceNode) and all(isinstance(i, yaml.ScalarNode) for i in v.value))
            if not ok:
                found = "a list" if isinstance(v, yaml.SequenceNode) else "a mapping" if isinstance(v, yaml.MappingNode) else (
                    "a boolean" if v.tag == "tag:yaml.org,2002:bool" else "a single value")
                self._d(WRONG_TYPE, "error", f"{what}: '{name}' must be {want}, found {found}", path, text, _node_span(v), skill,
                        "write it as a YAML list: [a, b]" if want == NAMES else None)
        status = seen.get("status")
        if isinstance(status, yaml.ScalarNode) and status.value != "ACTIVE" and str(status.value).upper() == "ACTIVE":
            self._d(STATUS_CASE, "warning", f"{what}: status '{status.value}' is not ACTIVE (statuses are case-sensitive): "
                    "it does not load", path, text, _node_span(status), skill, "write status: ACTIVE")
        return seen

    def skill(self, folder: Path) -> None:
        meta = folder / "skill.yaml"
        if not meta.is_file():
            return
        seen = self._schema(meta, SKILL_SCHEMA, "skill.yaml", folder.name)
        text = self._mapping(meta)
        src = text[0] if text else None
        key = seen.get("skill_key")
        if isinstance(key, yaml.ScalarNode) and key.value and key.value != folder.name:
            self._d(SHADOWED, "warning", f"skill_key '{key.value}' differs from the folder name: the skill's key is "
                    f"'{folder.name}' (the folder)", meta, src, _node_span(key), folder.name)
        for field, file in (("skill_manual", "manual.md"), ("skill_contract", "contract.jsonc")):
            node = seen.get(field)
            if node is not None and (folder / file).is_file():
                self._d(SHADOWED, "warning", f"{field} in skill.yaml is ignored: {file} beside it is the {field}",
                        meta, src, _node_span(node), folder.name, f"keep one: move the text into {file}")
        status = seen.get("status")
        if isinstance(status, yaml.ScalarNode) and status.value != "ACTIVE":
            return  # a record that does not load needs no manual yet
        # Bytes, not text: a manual that is not UTF-8 is the loader's to refuse (SC506), not a crash here.
        has_manual = (folder / "manual.md").is_file() and (folder / "manual.md").read_bytes().strip()
        if not has_manual and not (isinstance(seen.get("skill_manual"), yaml.ScalarNode) and seen["skill_manual"].value.strip()):
            self._d(NO_MANUAL, "warning", f"skill '{folder.name}' has no manual: the model gets no operating manual "
                    "when it plans or runs this skill (§1.2)", meta, src, None, folder.name,
                    f"write {folder / 'manual.md'}")

    def agent(self, path: Path) -> None:
        self._schema(path, AGENT_SCHEMA, f"agent {path.stem}", None)


def lint_skill(folder: str | Path) -> list[Diagnostic]:
    """Authoring diagnostics of one skill folder's skill.yaml (and its manual)."""
    base = Path(folder)
    linter = _Linter(base.parent.parent)
    linter.skill(base)
    return linter.diags


def lint_directory(root: str | Path) -> list[Diagnostic]:
    """Authoring diagnostics of a directory studio's YAML (agents/*.yaml, skills/*/skill.yaml)."""
    base = Path(root)
    linter = _Linter(base)
    if (base / "skills").is_dir():
        for folder in sorted(p for p in (base / "skills").iterdir() if p.is_dir()):
            linter.skill(folder)
    if (base / "agents").is_dir():
        for f in sorted((base / "agents").glob("*.yaml")):
            linter.agent(f)
    return linter.diags

