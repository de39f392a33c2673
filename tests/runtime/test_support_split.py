"""support.py is a thin face over paths / values / skillmeta / textpattern: generated code keeps its names, the
runtime imports the focused modules, and path text is parsed by one function."""
from __future__ import annotations

import ast
from pathlib import Path

import skillc.runtime
from skillc.runtime.compiled import paths, skillmeta, textpattern, values
from skillc.runtime import support
from skillc.runtime.compiled.paths import get_path, parse_path, path_text

ROOT = Path(skillc.runtime.__file__).parent


def test_support_reexports_the_focused_modules_objects() -> None:
    for name in support.__all__:
        obj = getattr(support, name)
        homes = [m for m in (paths, skillmeta, textpattern, values) if getattr(m, name, None) is obj]
        assert homes, name


def test_support_defines_nothing_itself() -> None:
    tree = ast.parse((ROOT / "support.py").read_text(encoding="utf-8"))
    defined = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    assert defined == []


def test_runtime_modules_do_not_import_support() -> None:
    """Only generated code uses it; the runtime imports the focused modules."""
    spellings = ("runtime import support", "runtime.support import", "import skillc.runtime.support")
    offenders = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
                 if p.name != "support.py" and any(s in line for line in p.read_text(encoding="utf-8").splitlines()
                                                 if not line.lstrip().startswith("#") for s in spellings)]
    assert offenders == []


def test_parse_path_reads_members_indexes_and_each() -> None:
    assert parse_path("lines[].goodsCode") == (("k", "lines"), ("e",), ("k", "goodsCode"))
    assert parse_path("data.0.id") == (("k", "data"), ("i", 0), ("k", "id"))
    assert parse_path("lines[].goodsCode", each=False) == (("k", "lines"), ("k", "goodsCode"))
    assert parse_path("") == ()
    assert path_text(parse_path("lines[].goodsCode")) == "lines[].goodsCode"


def test_parsed_text_reaches_the_same_values() -> None:
    doc = {"data": [{"id": 1}, {"id": 2}], "lines": [{"code": "a"}, {"code": "b"}]}
    assert get_path(doc, parse_path("data.1.id")) == 2
    assert get_path(doc, parse_path("lines[].code")) == ["a", "b"]
    assert get_path(doc, parse_path("lines.code", each=False)) == ["a", "b"]
    assert get_path(doc, parse_path("data.5.id")) is values.MISSING
