"""Read a compiled directory into plain data for `skillc diff`, without running any of its code.

A compiled directory under review may come from a pull request: its modules are parsed with `ast`
and only literals are evaluated (`ast.literal_eval`), never imported. What the runtime reads is
in the metadata records (`SKILL`, `TOOLS[...]`, `INPUTS`, `OUTPUTS`, the `ParamIssue` and enum
constants); the success rule and extracts are read from the shape of the generated functions.
The shape is the one this compiler version writes (`codegen`); a module it cannot read is
reported as such rather than guessed at.
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillc.runtime.words.errors import SkillcError


class UnreadableModule(SkillcError, ValueError):
    """A generated module whose shape this version of skillc does not know."""


@dataclass
class SkillView:
    """One skill of a compiled directory, as data: `status` is "ok" or "rejected"."""

    key: str
    status: str
    errors: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)  # SkillMeta fields
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    module_sha256: str | None = None


def path_text(parts: Any) -> str:
    """Compact path parts (("k", name), ("i", n), ("e",)) as contract text (`lines[].sku`)."""
    out = ""
    for p in parts or ():
        if p[0] == "e":
            out += "[]"
        else:
            out += ("." if out else "") + str(p[1])
    return out


def _value(node: ast.AST) -> Any:
    """A literal, or a metadata record call (`rt.X(...)`) as a dict; names stay names."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        out: dict[str, Any] = {"__record__": node.func.attr, "__args__": [_value(a) for a in node.args]}
        out.update({k.arg: _value(k.value) for k in node.keywords if k.arg})
        if node.func.attr == "json_value" and out["__args__"]:
            return json.loads(out["__args__"][0])  # a deep constant, carried as JSON text
        return out
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "frozenset":
        return frozenset(tuple(v) if isinstance(v, list) else v for v in _value(node.args[0]))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float":
        return float(ast.literal_eval(node.args[0]))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Call):
        return -_value(node.operand)
    if isinstance(node, ast.Name):
        return {"__name__": node.id}
    if isinstance(node, ast.Dict):
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values) if k is not None}
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_value(e) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    try:
        return ast.literal_eval(node)
    except ValueError as exc:
        raise UnreadableModule(f"not a literal at line {getattr(node, 'lineno', '?')}") from exc


def _record(node: ast.AST, kind: str) -> dict[str, Any]:
    value = _value(node)
    if not isinstance(value, dict) or value.get("__record__") != kind:
        raise UnreadableModule(f"expected rt.{kind}(...) at line {getattr(node, 'lineno', '?')}")
    return value


def _calls(fn: ast.FunctionDef | None, attr_prefix: str) -> list[ast.Call]:
    if fn is None:
        return []
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "rt" and n.func.attr.startswith(attr_prefix)]


def _success(judge: ast.FunctionDef | None) -> dict[str, Any] | None:
    """The §6.1 rule of a generated judge: {op, path, value} (op "ANY": any non-empty response)."""
    if judge is None:
        return None
    ops = _calls(judge, "op_")
    if not ops:
        return {"op": "ANY", "path": None, "value": None}
    call = ops[0]
    assert isinstance(call.func, ast.Attribute)  # _calls keeps only `rt.<attr>(...)` calls
    actual = call.args[0]
    if isinstance(actual, ast.Name):  # `actual = rt.get_path(response, P)` on a line of its own
        actual = next((n.value for n in ast.walk(judge) if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
                       and n.targets[0].id == actual.id), actual)
    parts = _value(actual.args[1]) if isinstance(actual, ast.Call) and len(actual.args) > 1 else ()
    value = _value(call.args[1]) if len(call.args) > 1 else None
    return {"op": call.func.attr[3:].upper(), "path": path_text(parts), "value": value}


def _error_paths(judge: ast.FunctionDef | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for call in _calls(judge, "Judgement"):
        for kw in call.keywords:
            inner = kw.value
            if kw.arg and isinstance(inner, ast.Call) and inner.args and isinstance(inner.args[0], ast.Call):
                out[kw.arg] = path_text(_value(inner.args[0].args[1]))
    return out


def _extracts(fn: ast.FunctionDef | None) -> dict[str, dict[str, Any]]:
    """Extract key -> {path, entity}: read from `sub = rt.get_path(response, P)` / `x.values[K] = sub`."""
    out: dict[str, dict[str, Any]] = {}
    if fn is None:
        return out
    path = ""
    for node in ast.walk(fn):
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id.startswith("sub")
                and isinstance(node.value, ast.Call)):
            path = path_text(_value(node.value.args[1]))
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            key = _value(node.targets[0].slice)
            if isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == "counts":
                continue
            out[key] = {"path": path}
    return out


def _binds(fn: ast.FunctionDef | None) -> dict[str, dict[str, Any]]:
    """Argument -> {source, const?}: `bound[P] = SOURCE`, and constants given to rt.set_path/set_all."""
    out: dict[str, dict[str, Any]] = {}
    if fn is None:
        return out
    consts: list[Any] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("set_path", "set_all"):
            third = node.args[2]
            consts.append(None if isinstance(third, ast.Name) else _value(third))
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            param, source = _value(node.targets[0].slice), _value(node.value)
            out[param] = {"source": source}
    for param, info in out.items():
        if info["source"] == "CONTRACT" and consts:
            info["const"] = consts.pop(0)
    return out


def read_module(text: str) -> dict[str, Any]:
    """The metadata and decisions of one generated module, as plain data."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise UnreadableModule(f"not Python: {exc.msg} (line {exc.lineno})") from exc
    functions: dict[str, ast.FunctionDef] = {}
    constants: dict[str, Any] = {}
    skill: dict[str, Any] = {}
    tools: dict[str, dict[str, Any]] = {}
    inputs: dict[str, Any] = {}
    outputs: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if node.value is None:
                continue
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == "TOOLS":
                tools[_value(target.slice)] = _record(node.value, "ToolMeta")
            elif isinstance(target, ast.Name) and target.id == "TOOLS" and isinstance(node.value, ast.Dict):
                tools.update({_value(k): _record(v, "ToolMeta") for k, v in zip(node.value.keys, node.value.values) if k is not None})
            elif isinstance(target, ast.Name) and target.id == "SKILL":
                skill = _record(node.value, "SkillMeta")
            elif isinstance(target, ast.Name) and target.id in ("INPUTS", "OUTPUTS") and isinstance(node.value, ast.Dict):
                (inputs if target.id == "INPUTS" else outputs).update(_value(node.value))
            elif isinstance(target, ast.Name) and target.id.startswith("_"):
                constants[target.id] = _value(node.value)
    if not skill:
        raise UnreadableModule("no SKILL record")
    return {"skill": skill, "tools": tools, "inputs": inputs, "outputs": outputs, "functions": functions, "constants": constants}


def _fn(module: dict[str, Any], ref: Any) -> ast.FunctionDef | None:
    return module["functions"].get(ref["__name__"]) if isinstance(ref, dict) and "__name__" in ref else None


def _tool_view(module: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    check = _fn(module, meta.get("check"))
    issues: dict[str, dict[str, Any]] = {}
    enums: dict[str, Any] = {}
    for node in ast.walk(check) if check is not None else ():
        if isinstance(node, ast.Name) and node.id in module["constants"]:
            value = module["constants"][node.id]
            if isinstance(value, dict) and value.get("__record__") == "ParamIssue":
                action, param, reason = value["__args__"][:3]
                issues.setdefault(param, {})[reason] = {"action": action, "tool": value.get("tool"), "message": value.get("message")}
            elif isinstance(value, frozenset):
                enums[node.id] = value
    # An enum set belongs to the argument whose issue the `if … not in SET:` test appends.
    allowed: dict[str, Any] = {}
    for node in ast.walk(check) if check is not None else ():
        if not isinstance(node, ast.If):
            continue
        sets = [n.id for n in ast.walk(node.test) if isinstance(n, ast.Name) and n.id in enums]
        issued = [module["constants"][n.id] for stmt in node.body for n in ast.walk(stmt)
                  if isinstance(n, ast.Name) and isinstance(module["constants"].get(n.id), dict)]
        if sets and issued and issued[0].get("__record__") == "ParamIssue":
            allowed[issued[0]["__args__"][1]] = sorted(_enum_text(k) for k in enums[sets[0]])
    binds = _binds(_fn(module, meta.get("bind")))
    args: dict[str, dict[str, Any]] = {}
    for param, am in (meta.get("args") or {}).items():
        args[param] = {
            "label": am.get("label"),
            "sensitive": bool(am.get("sensitive", False)),
            "bound": bool(am.get("bound", False)),
            "platform": bool(am.get("platform", False)),
            "sources": list(am.get("sources", ())),
            "bind": binds.get(param),
            "missing": issues.get(param, {}).get("missing"),
            "provenance": (issues.get(param, {}).get("provenance") or {}).get("action"),
            "enum": allowed.get(param),
            "evidence": sorted(_field_text(f) for f in am.get("evidence_fields", ())),
        }
    judge = _fn(module, meta.get("judge"))
    verify = _fn(module, meta.get("verify_args"))
    return {
        "label": meta.get("label"),
        "side_effect": meta.get("side_effect", "NONE"),
        "confirm": bool(meta.get("confirm", False)),
        "idempotency_key": [path_text(p) for p in meta.get("idempotency_key", ())],
        "verify_tool": meta.get("verify_tool"),
        "verify_args": None if verify is None else sorted({_value(n.targets[0].slice) for n in ast.walk(verify)
                                                          if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Subscript)}) or ["*"],
        "args": args,
        "success": _success(judge),
        "error": _error_paths(judge),
        "extracts": _extracts(_fn(module, meta.get("extract"))),
        "rules": {r["__args__"][0]: {"expr": r.get("expr", ""), "when": r.get("when"), "lets": [list(x) for x in r.get("lets", ())],
                                    "message": r["__args__"][2]}
                  for r in meta.get("rules", ()) if isinstance(r, dict) and r.get("__record__") == "RuleMeta"},
    }


def _field_text(field: Any) -> str:
    """A typed-evidence field (tool or None, extract key, path) as `tool:key.path` (`*` for any tool)."""
    tool, key, parts = field
    rest = path_text(parts)
    return f"{tool or '*'}:{key}" + (("" if rest.startswith("[]") else ".") + rest if rest else "")


def _enum_text(key: tuple[Any, ...]) -> str:
    """An `rt.enum_key` key as the JSON text of its value ("j" keys already are JSON text)."""
    return key[1] if key[0] == "j" else json.dumps(key[1], ensure_ascii=False)


# Field defaults of the metadata records: a module names only what differs (and an older one may
# name everything), so both read the same once defaults are filled in; other fields are dropped.
_DEFAULTS: dict[str, dict[str, Any]] = {
    "SkillMeta": {"key": None, "name": "", "mode": "REACT", "delegatable": False, "target": None, "tool_names": (),
                  "semantic_desc": "", "manual": ""},
    "InputMeta": {"name": None, "required": True, "provider": None, "prefix": None, "share_key": None},
    "OutputMeta": {"name": None, "type": "VALUE", "fields": (), "min_items": 1, "hint": None, "required": True, "share": None,
                   "entity": None, "sources": (), "has_constant": False, "constant": None},
    "EntitySpec": {"type": None, "id": "id", "name": "name", "scalar": None, "keyed": False},
}


def _plain(record: dict[str, Any]) -> dict[str, Any]:
    """A record with its defaults filled in and positional arguments named."""
    defaults = _DEFAULTS.get(record.get("__record__", ""), {})
    out = dict(defaults)
    out.update(zip(defaults, record.get("__args__", ())))
    out.update({k: v for k, v in record.items() if not k.startswith("__") and (k in defaults or not defaults)})
    for k, v in out.items():
        if isinstance(v, dict) and "__record__" in v:
            out[k] = _plain(v)
        elif isinstance(v, tuple):
            out[k] = list(v)
    return out


def read_agents(out_dir: str | Path) -> dict[str, list[str]]:
    """Agent code -> the skill keys its template offers, from the manifest of a compiled directory."""
    manifest = json.loads((Path(out_dir) / "manifest.json").read_text(encoding="utf-8"))
    return {code: list(entry.get("skills", [])) for code, entry in sorted(manifest.get("agents", {}).items())}


def read_compiled(out_dir: str | Path) -> tuple[str, dict[str, SkillView]]:
    """(compiler version, skill key -> view) of a directory `skillc compile` wrote."""
    root = Path(out_dir)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    views: dict[str, SkillView] = {}
    for key, entry in sorted(manifest.get("skills", {}).items()):
        if entry.get("status") != "ok" or not entry.get("module"):
            errors = [f"{d.get('code')}: {d.get('message')}" for d in entry.get("diagnostics", []) if d.get("severity", "error") == "error"]
            views[key] = SkillView(key=key, status="rejected", errors=errors)
            continue
        path = (root / entry["module"]).resolve()
        if root.resolve() not in path.parents:
            views[key] = SkillView(key=key, status="rejected", errors=[f"module path {entry['module']!r} leads outside the directory"])
            continue
        try:
            module = read_module(path.read_text(encoding="utf-8"))
        except (OSError, UnreadableModule) as exc:
            views[key] = SkillView(key=key, status="unreadable", errors=[str(exc)])
            continue
        meta = _plain(module["skill"])
        meta["tool_names"] = list(meta.get("tool_names", ()))
        views[key] = SkillView(
            key=key,
            status="ok",
            meta=meta,
            inputs={k: _plain(v) for k, v in module["inputs"].items()},
            outputs={k: _plain(v) for k, v in module["outputs"].items()},
            tools={name: _tool_view(module, meta_) for name, meta_ in module["tools"].items()},
            module_sha256=entry.get("module_sha256"),
        )
    return str(manifest.get("compiler_version", "")), views
