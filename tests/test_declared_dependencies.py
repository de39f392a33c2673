"""Every third-party package the runtime half and the CLI import is declared in pyproject.toml:
one reaching the install only through another package's dependencies (Starlette and uvicorn
through `mcp`) would vanish the day that package drops it."""
from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Optional imports, each guarded where it is used, with the extra that brings it.
OPTIONAL = {"opentelemetry": "otel", "psycopg": "postgres", "psycopg_pool": "postgres", "lark": "compiler",
            "pytest": "dev"}  # the pytest plugin is loaded by pytest only


def _top_level_imports(folder: Path) -> set[str]:
    names: set[str] = set()
    for path in folder.rglob("*.py"):
        if ".venv" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"skillc", "__future__"}


def _declared() -> dict[str, set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = {"": project["dependencies"], **project["optional-dependencies"]}
    return {group: {re.split(r"[<>=!\[; ]", req, maxsplit=1)[0].lower().replace("_", "-") for req in reqs}
            for group, reqs in groups.items()}


def _distribution_of(module: str) -> set[str]:
    return {d.lower().replace("_", "-") for d in metadata.packages_distributions().get(module, [])}


def test_what_the_runtime_and_cli_import_is_declared() -> None:
    declared = _declared()
    missing = []
    for module in sorted(_top_level_imports(ROOT / "runtime") | _top_level_imports(ROOT / "cli")):
        group = OPTIONAL.get(module, "")
        dists = _distribution_of(module)
        assert dists, f"{module} is imported but not installed"
        if not dists & declared[group]:
            missing.append(f"{module} (from {', '.join(sorted(dists))}) in [{group or 'dependencies'}]")
    assert not missing, "imported but not declared: " + "; ".join(missing)
