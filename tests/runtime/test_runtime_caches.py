"""No process-global state in runtime/ beyond the caches docs/ARCHITECTURE.md lists (its "Caches"
paragraph names each with its bound and why): a module-level dict, list or set that the module
changes, or a function under `lru_cache`, must be named there as `module.NAME` (issue 29, item 4).
A new one fails here until it is bounded and documented, or goes."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "runtime"
CONTAINERS = {"dict", "list", "set", "defaultdict", "OrderedDict", "WeakKeyDictionary", "WeakValueDictionary",
              "WeakSet", "deque"}
CHANGES = {"append", "add", "clear", "update", "pop", "popitem", "setdefault", "discard", "remove", "extend",
           "insert", "appendleft"}


def _caches(path: Path) -> set[str]:
    """`module.NAME` of every module-level container the module changes, and every lru_cache'd function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = ".".join(path.relative_to(RUNTIME).with_suffix("").parts)
    containers: set[str] = set()
    found: set[str] = set()
    for stmt in tree.body:
        target, value = None, None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        if isinstance(target, ast.Name) and value is not None:
            call = value.func if isinstance(value, ast.Call) else None
            name = call.attr if isinstance(call, ast.Attribute) else call.id if isinstance(call, ast.Name) else None
            if isinstance(value, (ast.Dict, ast.List, ast.Set)) or name in CONTAINERS:
                containers.add(target.id)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in stmt.decorator_list:
                fn = dec.func if isinstance(dec, ast.Call) else dec
                if (fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")) in ("lru_cache", "cache"):
                    found.add(f"{module}.{stmt.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CHANGES:
            base = node.func.value
        else:
            continue
        if isinstance(base, ast.Name) and base.id in containers:
            found.add(f"{module}.{base.id}")
    return found


def _paragraph() -> str:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    assert "\n## Caches\n" in text, "docs/ARCHITECTURE.md has no Caches section"
    return text.split("\n## Caches\n", 1)[1].split("\n## ", 1)[0]


def test_every_runtime_cache_is_bounded_and_documented() -> None:
    found = set().union(*(_caches(p) for p in sorted(RUNTIME.rglob("*.py"))))
    assert "store.base._LOCAL" in found and "compiled.paths.parse_path" in found  # the scan sees what it should
    listed = _paragraph()
    missing = sorted(name for name in found if f"`{name}`" not in listed)
    assert not missing, f"module-level state not in docs/ARCHITECTURE.md's Caches section: {missing}"


def test_the_caches_section_names_only_what_exists() -> None:
    import re

    found = set().union(*(_caches(p) for p in sorted(RUNTIME.rglob("*.py"))))
    named = set(re.findall(r"`([a-z_]+(?:\.[a-z_]+)*\.[A-Za-z_]+)`", _paragraph()))
    assert named and named <= found, sorted(named - found)
