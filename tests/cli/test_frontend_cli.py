"""`skillc check` and `skillc schema`: output, exit codes, and no mcp import."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillc.main import run

STUDIO = Path(__file__).parents[1] / "fixtures" / "frontend" / "studio"


def test_check_clean_studio(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", str(STUDIO)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == f"checked 3 skills of 2 agents in {STUDIO}: 3 loaded, 0 rejected; 0 errors, 0 warnings"


def _broken(tmp_path: Path) -> Path:
    root = tmp_path / "studio"
    shutil.copytree(STUDIO, root)
    path = root / "skills" / "cms.article.create" / "contract.jsonc"
    text = path.read_text(encoding="utf-8")
    text = text.replace('"sideEffect": "WRITE"', '"sideEffect": "WRITE", "confirm": false')
    text = text.replace('"title": {"sources": ["USER"]', '"title": {"sources": ["USER"], "from": "platform.token"')
    path.write_text(text, encoding="utf-8")
    return root


def test_check_errors_human(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _broken(tmp_path)
    assert run(["check", str(root)]) == 1
    out = capsys.readouterr().out
    contract = root / "skills" / "cms.article.create" / "contract.jsonc"
    assert f"{contract}:12:58: error[SC110]: tools.cms_article_create.args.title.from: unknown platform field 'token'" in out
    assert " 12 |" in out and "^~~~~" in out
    assert f"{contract}:8:41: note[SC214]" in out
    assert "2 loaded, 1 rejected; 1 error, 0 warnings, 1 note" in out
    assert out.rstrip().endswith("rejected: cms.article.create")


def test_check_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", str(_broken(tmp_path)), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["rejected"] == ["cms.article.create"]
    assert doc["loaded"] == ["cms.space.lookup", "inv.invoice.issue"]
    assert doc["summary"] == {"skills": 3, "errors": 1, "warnings": 0, "notes": 1}
    codes = [(d["code"], d["severity"], d["line"], d["column"]) for d in doc["diagnostics"]]
    assert codes == [("SC214", "note", 8, 41), ("SC110", "error", 12, 58)]


def test_check_unreadable_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_check_bad_invocation() -> None:
    with pytest.raises(SystemExit) as info:
        run(["check", "--format", "xml"])
    assert info.value.code == 2


def test_schema_command_validates_fixture_contracts(capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from skillc.compiler.parse import parse_json, plain

    assert run(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for path in sorted(STUDIO.glob("skills/*/contract.jsonc")):
        j, _ = parse_json(path.read_text(encoding="utf-8"))
        if j is None:
            continue  # the INACTIVE fixture is deliberately broken
        assert list(validator.iter_errors(plain(j))) == [], path
    bad = {"tools": {"t": {"sideEffect": "write", "args": {"a": {"from": "foo.bar"}}}}}
    assert len(list(validator.iter_errors(bad))) == 2


def test_schema_covers_every_ir_field() -> None:
    from skillc.compiler.schema import AUTHOR_KEYS, INTERNAL_FIELDS

    for model, keys in AUTHOR_KEYS.items():
        assert set(model.model_fields) - INTERNAL_FIELDS <= set(keys.values()), model.__name__


def test_check_does_not_import_mcp() -> None:
    code = ("import sys\nfrom skillc.main import run\nrc = run(['check', %r])\n"
            "assert 'mcp' not in sys.modules, 'mcp imported'\nsys.exit(rc)") % str(STUDIO)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
