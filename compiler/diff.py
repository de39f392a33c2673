"""`skillc diff OLD NEW`: what changed in the behaviour of each skill, in a reviewer's words.

OLD and NEW are each a compiled directory (it has manifest.json), a studio (a directory or SQLite
file any studio source reads), or a git revision of either, `REV:PATH` (`HEAD~1:examples/studio`,
PATH from the repository's root, as `git show` reads it), extracted with `git archive` into a
temporary directory. A studio is compiled first, into a temporary directory; both sides are then
read the same way, from their compiled modules, without running them (`diff_read`).

Each change has a stable `kind`, a message, and `risky` when it widens what a call may do or
what counts as success: an argument that now accepts MODEL values, a write that lost its approval
or idempotency key, a success rule loosened, a verify removed, a new tool in toolNames, a skill
that no longer loads, …
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import tarfile
import tempfile
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypedDict

from skillc.compiler.diff_read import SkillView, read_agents, read_compiled
from skillc.runtime.words.errors import SkillcError


class DiffInputError(SkillcError, ValueError):
    """OLD or NEW cannot be read (no such path or revision, not a studio nor a compiled directory)."""


@dataclass(frozen=True)
class Change:
    """One behaviour change of one skill (tool and arg when it is theirs)."""

    skill: str
    kind: str
    message: str
    risky: bool = False
    tool: str | None = None
    arg: str | None = None
    old: Any = None
    new: Any = None


# ---------------------------------------------------------------- inputs


def _git_extract(spec: str, dest: Path, cwd: Path) -> Path:
    rev, _, path = spec.partition(":")
    path = path.strip("/")
    try:
        proc = subprocess.run(["git", "archive", "--format=tar", f"{rev}:{path}" if path else rev],
                              cwd=cwd, capture_output=True, check=False)
    except OSError as exc:
        raise DiffInputError(f"{spec}: cannot run git: {exc}") from exc
    if proc.returncode != 0:
        raise DiffInputError(f"{spec}: not a git revision and path here: {proc.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def _is_git_spec(spec: str, cwd: Path) -> bool:
    return ":" in spec and not (cwd / spec).exists() and not (len(spec) > 1 and spec[1] == ":" and os.name == "nt")


def resolve(spec: str, stack: ExitStack, *, cwd: str | os.PathLike[str] | None = None) -> Path:
    """A compiled directory for `spec` (temporary ones are removed when `stack` closes)."""
    here = Path(cwd or os.getcwd())
    path = Path(spec)
    if _is_git_spec(spec, here):
        path = _git_extract(spec, Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="skillc-diff-git-"))), here)
    elif not path.is_absolute():
        path = here / path
    if not path.exists():
        raise DiffInputError(f"{spec}: no such file or directory (nor a git REV:PATH)")
    if (path / "manifest.json").is_file():
        return path
    from skillc.compiler.build import compile_studio
    from skillc.compiler.sources import load_studio

    try:
        studio = load_studio(path)
    except Exception as exc:  # any source error: say which side
        raise DiffInputError(f"{spec}: neither a compiled directory nor a studio: {exc}") from exc
    out = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="skillc-diff-")))
    compile_studio(studio, out, force=True)
    return out


# ---------------------------------------------------------------- comparing


_STRENGTH = {None: 0, "ANY": 1, "EXISTS": 2, "TRUTHY": 3, "NE": 4, "NOT_IN": 4, "MATCHES": 4, "IN": 5, "EQ": 6}


def _rule_text(rule: dict[str, Any] | None) -> str:
    if rule is None:
        return "none (every response succeeds)"
    if rule["op"] == "ANY":
        return "any non-empty response"
    value = "" if rule["op"] in ("TRUTHY", "EXISTS") else " " + json.dumps(rule["value"], ensure_ascii=False)
    return f"{rule['path']} {rule['op']}{value}"


def _loosened(old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool | None:
    """True when `new` accepts responses `old` refused, False when it only tightens, None when
    the direction is not known (a changed path or value)."""
    if old == new:
        return False
    if new is None or old is None:
        return new is None
    if new["op"] == "ANY" or old["op"] == "ANY":  # any non-empty response: below every op
        return bool(new["op"] == "ANY")
    if old["path"] != new["path"]:
        return None
    o, n = old["op"], new["op"]
    if o == n and o in ("IN", "NOT_IN"):
        ov, nv = {json.dumps(v) for v in old["value"] or []}, {json.dumps(v) for v in new["value"] or []}
        wider, narrower = (nv > ov, nv < ov) if o == "IN" else (nv < ov, nv > ov)
        return True if wider else False if narrower else None
    if o == "EQ" and n == "IN" and isinstance(new["value"], list) and old["value"] in new["value"]:
        return True
    if _STRENGTH.get(n, 0) < _STRENGTH.get(o, 0):
        return True
    return None if _STRENGTH.get(n, 0) == _STRENGTH.get(o, 0) else False


def _q(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class _Where(TypedDict, total=False):
    """Which tool (and argument) a change belongs to, passed on as keywords to `_Collector.add`."""

    tool: str
    arg: str


class _Collector:
    def __init__(self, skill: str) -> None:
        self.skill = skill
        self.changes: list[Change] = []

    def add(self, kind: str, message: str, risky: bool = False, tool: str | None = None, arg: str | None = None,
            old: Any = None, new: Any = None) -> None:
        self.changes.append(Change(self.skill, kind, message, risky, tool, arg, old, new))


def _compare_arg(c: _Collector, tool: str, arg: str, o: dict[str, Any], n: dict[str, Any]) -> None:
    where: _Where = {"tool": tool, "arg": arg}
    if o["provenance"] is not None and n["provenance"] is None and not n["bound"]:
        c.add("arg.accepts_model", "now accepts MODEL values (anything the model writes)", True, **where)
    elif o["provenance"] is not None and n["provenance"] is None:
        c.add("arg.accepts_model", "a value the runtime could not bind is now accepted from the model", True, **where)
    gained = [s for s in n["sources"] if s not in o["sources"] and s != "MODEL"]
    lost = [s for s in o["sources"] if s not in n["sources"]]
    if gained:
        c.add("arg.sources_widened", f"now also accepts values from {', '.join(gained)}", True, old=o["sources"], new=n["sources"], **where)
    if lost:
        c.add("arg.sources_narrowed", f"no longer accepts values from {', '.join(lost)}", old=o["sources"], new=n["sources"], **where)
    ob, nb = (o["bind"] or {}).get("source"), (n["bind"] or {}).get("source")
    if ob and not nb:
        c.add("arg.unbound", f"no longer filled by the runtime (was {ob}): the model's value is used", True, old=ob, **where)
    elif nb and not ob:
        c.add("arg.bound", f"now filled by the runtime from {nb}", new=nb, **where)
    elif ob != nb:
        c.add("arg.bind_source", f"now filled from {nb} instead of {ob}", ob == "PLATFORM", old=ob, new=nb, **where)
    elif ob == "CONTRACT" and (o["bind"] or {}).get("const") != (n["bind"] or {}).get("const"):
        c.add("arg.const", f"constant {_q(o['bind'].get('const'))} -> {_q(n['bind'].get('const'))}",
              old=o["bind"].get("const"), new=n["bind"].get("const"), **where)
    if o["enum"] is not None and n["enum"] is None:
        c.add("arg.enum_removed", f"no longer limited to {', '.join(o['enum'])}", True, old=o["enum"], **where)
    elif o["enum"] is not None and n["enum"] is not None and set(n["enum"]) - set(o["enum"]):
        c.add("arg.enum_widened", f"now also allows {', '.join(sorted(set(n['enum']) - set(o['enum'])))}", True, old=o["enum"], new=n["enum"], **where)
    elif n["enum"] is not None and n["enum"] != o["enum"]:
        c.add("arg.enum_narrowed", f"allowed values now {', '.join(n['enum'])}", old=o["enum"], new=n["enum"], **where)
    oe, ne = o.get("evidence") or [], n.get("evidence") or []
    if "EVIDENCE" in n["sources"] and oe and not ne:
        c.add("arg.evidence_removed", f"EVIDENCE accepts any extracted value again (was only {', '.join(oe)})", True,
              old=oe, **where)
    elif oe and ne and set(ne) - set(oe):
        c.add("arg.evidence_widened", f"now also backed by {', '.join(sorted(set(ne) - set(oe)))}", True, old=oe, new=ne, **where)
    elif ne and ne != oe:
        c.add("arg.evidence_narrowed", f"EVIDENCE now only from {', '.join(ne)}", old=oe, new=ne, **where)
    om, nm = o["missing"], n["missing"]
    if om and not nm:
        c.add("arg.optional", "a missing value now passes (was " + om["action"] + ")", True, old=om, **where)
    elif nm and om != nm:
        was = om["action"] if om else "passes"
        c.add("arg.missing_action", f"when missing: {was} -> {nm['action']}" + (f" {nm['tool']}" if nm.get("tool") else ""), old=om, new=nm, **where)
    if o["sensitive"] and not n["sensitive"]:
        c.add("arg.not_sensitive", "no longer masked in approval summaries and traces", True, **where)
    elif n["sensitive"] and not o["sensitive"]:
        c.add("arg.sensitive", "now masked in approval summaries and traces", **where)
    if o["label"] != n["label"]:
        c.add("arg.label", f"label {_q(o['label'])} -> {_q(n['label'])}", old=o["label"], new=n["label"], **where)


def _compare_tool(c: _Collector, name: str, o: dict[str, Any], n: dict[str, Any]) -> None:
    t: _Where = {"tool": name}
    if o["side_effect"] == "WRITE" and n["side_effect"] != "WRITE":
        c.add("tool.not_write", "no longer a write: no approval, no pre-registration, no idempotency (§14)", True, **t)
    elif n["side_effect"] == "WRITE" and o["side_effect"] != "WRITE":
        c.add("tool.write", "now a write (approval, pre-registration, idempotency, §14)", **t)
    both_write = o["side_effect"] == n["side_effect"] == "WRITE"
    if both_write and o["confirm"] and not n["confirm"]:
        c.add("tool.no_approval", "the write no longer asks for approval (confirm false, §14.1)", True, **t)
    elif both_write and n["confirm"] and not o["confirm"]:
        c.add("tool.approval", "the write now asks for approval (§14.1)", **t)
    if both_write and o["idempotency_key"] and not n["idempotency_key"]:
        c.add("tool.no_idempotency_key", f"the write lost its idempotency key ({', '.join(o['idempotency_key'])}): a repeat writes twice (§14.2)",
              True, old=o["idempotency_key"], **t)
    elif both_write and o["idempotency_key"] != n["idempotency_key"]:
        dropped = [k for k in o["idempotency_key"] if k not in n["idempotency_key"]]
        c.add("tool.idempotency_key", f"idempotency key {', '.join(o['idempotency_key']) or '-'} -> {', '.join(n['idempotency_key'])}",
              bool(dropped), old=o["idempotency_key"], new=n["idempotency_key"], **t)
    if o["verify_tool"] and not n["verify_tool"]:
        c.add("tool.verify_removed", f"verify {o['verify_tool']} removed: an unknown outcome is settled by asking the user (§6.4)", True, **t)
    elif n["verify_tool"] != o["verify_tool"]:
        c.add("tool.verify", f"verify {o['verify_tool'] or '-'} -> {n['verify_tool']}", old=o["verify_tool"], new=n["verify_tool"], **t)
    elif o["verify_args"] != n["verify_args"]:
        c.add("tool.verify_args", f"verify arguments {o['verify_args']} -> {n['verify_args']}", **t)
    if o["success"] != n["success"]:
        loose = _loosened(o["success"], n["success"])
        word = "loosened" if loose else "tightened" if loose is False else "changed"
        c.add(f"tool.success_{word}", f"success rule {word}: {_rule_text(o['success'])} -> {_rule_text(n['success'])} (§6.1)",
              loose is not False, old=o["success"], new=n["success"], **t)
    if o["error"] != n["error"]:
        c.add("tool.error_paths", f"error paths {o['error']} -> {n['error']}", **t)
    for key in sorted(set(o["extracts"]) - set(n["extracts"])):
        c.add("tool.extract_removed", f"no longer extracts {_q(key)} (evidence and outputs that read it find nothing)", **t)
    for key in sorted(set(n["extracts"]) - set(o["extracts"])):
        c.add("tool.extract_added", f"now extracts {_q(key)} at {n['extracts'][key]['path']}", **t)
    for key in sorted(set(o["extracts"]) & set(n["extracts"])):
        if o["extracts"][key] != n["extracts"][key]:
            c.add("tool.extract_path", f"extract {_q(key)} now at {n['extracts'][key]['path']}", **t)
    if o.get("rules") or n.get("rules"):
        from skillc.compiler.diff_rules import compare_rules  # lark's rule grammar only when used

        compare_rules(c, name, o.get("rules") or {}, n.get("rules") or {})
    if o["label"] != n["label"]:
        c.add("tool.label", f"label {_q(o['label'])} -> {_q(n['label'])}", **t)
    for arg in o["args"]:
        if arg not in n["args"]:
            c.add("arg.removed", "no longer in the contract: any value the model gives is accepted", True, tool=name, arg=arg)
    for arg in n["args"]:
        if arg not in o["args"]:
            c.add("arg.added", "now checked by the contract", tool=name, arg=arg)
        else:
            _compare_arg(c, name, arg, o["args"][arg], n["args"][arg])


def _compare_skill(key: str, o: SkillView | None, n: SkillView | None) -> list[Change]:
    """The changes of one skill: whether it exists and loads on each side; when it loads on both,
    its own fields, its tool contracts, inputs and outputs."""
    c = _Collector(key)
    if o is None or n is None:
        _presence_change(c, n)
        return c.changes
    if _load_change(c, o, n) or o.status != "ok":  # rejected on both sides: no behaviour to compare
        return c.changes
    _compare_meta(c, o.meta, n.meta, set(n.tools))
    _compare_contracts(c, o, n)
    _compare_specs(c, "input", o.inputs, n.inputs)
    _compare_specs(c, "output", o.outputs, n.outputs)
    return c.changes


def _presence_change(c: _Collector, n: SkillView | None) -> None:
    """A skill on one side only: removed, added, or added but not loading."""
    if n is None:
        c.add("skill.removed", "skill removed (or no longer ACTIVE)")
    elif n.status != "ok":
        c.add("skill.fails_to_load", "new skill that does not load: " + "; ".join(n.errors[:3]), True)
    else:
        c.add("skill.added", f"new skill with tools {', '.join(n.meta.get('tool_names', []))}")


def _load_change(c: _Collector, o: SkillView, n: SkillView) -> bool:
    """A side that cannot be read, or a skill that stopped or started loading: True when such a
    change was added (the skill's contract is then not compared further)."""
    if "unreadable" in (o.status, n.status):
        side = "new" if n.status == "unreadable" else "old"
        c.add("skill.unreadable", f"the {side} module cannot be read ({'; '.join((n if side == 'new' else o).errors)}): "
              "compare after compiling both sides with this skillc", True)
        return True
    if o.status == "ok" and n.status != "ok":
        c.add("skill.fails_to_load", "the skill now fails to load: " + "; ".join(n.errors[:3]), True)
        return True
    if o.status != "ok" and n.status == "ok":
        c.add("skill.loads", "the skill loads again")
        return True
    return False


def _compare_meta(c: _Collector, om: dict[str, Any], nm: dict[str, Any], new_contracts: set[str]) -> None:
    """The skill's own fields: toolNames (a new name without a contract is callable with no
    checks), mode, target, delegatable and the descriptive texts."""
    for name in nm.get("tool_names", []):
        if name not in om.get("tool_names", []):
            bare = "" if name in new_contracts else " with no contract: callable as a read with no checks (§1.3)"
            c.add("skill.tool_added", f"new tool in toolNames: {name}{bare}", True, tool=name)
    for name in om.get("tool_names", []):
        if name not in nm.get("tool_names", []):
            c.add("skill.tool_removed", f"tool no longer in toolNames: {name}", tool=name)
    for field, label in (("mode", "mode"), ("target", "target"), ("delegatable", "delegatable")):
        if om.get(field) != nm.get(field):
            risky = field == "target" and om.get(field) is not None
            c.add(f"skill.{field}", f"{label} {_q(om.get(field))} -> {_q(nm.get(field))}", risky, old=om.get(field), new=nm.get(field))
    for field in ("name", "semantic_desc", "manual"):
        if om.get(field) != nm.get(field):
            c.add(f"skill.{field}", f"{field.replace('_', ' ')} changed")


def _compare_contracts(c: _Collector, o: SkillView, n: SkillView) -> None:
    """Tool contracts by name: removed (risky while the tool stays in toolNames), added, or compared."""
    for name in sorted(set(o.tools) | set(n.tools)):
        if name not in n.tools:
            still = name in n.meta.get("tool_names", [])
            c.add("tool.contract_removed", "contract removed" + (": still in toolNames, now callable with no checks" if still else ""),
                  still, tool=name)
        elif name not in o.tools:
            if name in o.meta.get("tool_names", []):
                c.add("tool.contract_added", "now has a contract", tool=name)
        else:
            _compare_tool(c, name, o.tools[name], n.tools[name])


def _compare_specs(c: _Collector, kind: str, old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> None:
    """The skill's inputs or outputs (`kind`) by name; an output with sources that gains one is
    risky (its value may now come from somewhere it could not before)."""
    for name in sorted(set(old) | set(new)):
        if old.get(name) == new.get(name):
            continue
        if name not in new:
            c.add(f"{kind}.removed", f"{kind} {_q(name)} removed")
        elif name not in old:
            c.add(f"{kind}.added", f"{kind} {_q(name)} added")
        else:
            gained = [s for s in new[name].get("sources", ()) if s not in old[name].get("sources", ())]
            risky = kind == "output" and bool(old[name].get("sources")) and bool(gained)
            fields = sorted(k for k in set(old[name]) | set(new[name]) if old[name].get(k) != new[name].get(k))
            c.add(f"{kind}.changed", f"{kind} {_q(name)}: {', '.join(fields)} changed" + (f" (now also from {', '.join(gained)})" if risky else ""),
                  risky, old=old[name], new=new[name])


def _agent_changes(old: dict[str, list[str]], new: dict[str, list[str]]) -> dict[str, list[Change]]:
    """Skill key -> the agents that now offer it or no longer do."""
    out: dict[str, list[Change]] = {}
    for code in sorted(set(old) | set(new)):
        before, after = set(old.get(code, ())), set(new.get(code, ()))
        for key in sorted(after - before):
            out.setdefault(key, []).append(Change(key, "agent.skill_added", f"now offered by agent {code}"))
        for key in sorted(before - after):
            out.setdefault(key, []).append(Change(key, "agent.skill_removed", f"no longer offered by agent {code}"))
    return out


def compare(old: dict[str, SkillView], new: dict[str, SkillView],
            old_agents: dict[str, list[str]] | None = None, new_agents: dict[str, list[str]] | None = None) -> list[Change]:
    """Every behaviour change from `old` to `new`, skill by skill in key order (with the agents
    that newly offer a skill, or stopped, when their skill lists are given)."""
    agents = _agent_changes(old_agents or {}, new_agents or {})
    out: list[Change] = []
    for key in sorted(set(old) | set(new) | set(agents)):
        out += _compare_skill(key, old.get(key), new.get(key)) + agents.get(key, [])
    return out


def diff(old: str, new: str, *, cwd: str | os.PathLike[str] | None = None) -> list[Change]:
    """Resolve OLD and NEW (compiled dir, studio, or git REV:PATH) and compare them."""
    with ExitStack() as stack:
        a_dir, b_dir = resolve(old, stack, cwd=cwd), resolve(new, stack, cwd=cwd)
        return compare(read_compiled(a_dir)[1], read_compiled(b_dir)[1], read_agents(a_dir), read_agents(b_dir))


# ---------------------------------------------------------------- rendering


def render_text(changes: list[Change]) -> str:
    """Per skill, one line per change; risky ones marked `RISKY`."""
    if not changes:
        return "no behaviour changes\n"
    lines: list[str] = []
    skill = None
    for ch in changes:
        if ch.skill != skill:
            skill = ch.skill
            mine = [c for c in changes if c.skill == skill]
            risky = sum(c.risky for c in mine)
            lines.append(f"{skill}: {len(mine)} change{'s' if len(mine) != 1 else ''}" + (f", {risky} risky" if risky else ""))
        where = ".".join(p for p in (ch.tool, ch.arg) if p)
        mark = "RISKY " if ch.risky else "      "
        lines.append(f"  {mark}{where + ': ' if where else ''}{ch.message}")
    total = sum(c.risky for c in changes)
    skills = len({c.skill for c in changes})
    lines.append(f"{len(changes)} change{'s' if len(changes) != 1 else ''} in {skills} skill{'s' if skills != 1 else ''}, {total} risky")
    return "\n".join(lines) + "\n"


def render_json(changes: list[Change]) -> str:
    """{"changes": [...], "risky": n} with each change's kind, message, tool, arg, old and new."""
    data = {"changes": [asdict(c) for c in changes], "risky": sum(c.risky for c in changes)}
    return json.dumps(data, ensure_ascii=False, indent=2, default=list) + "\n"
