"""syrupy snapshots of what `skillc compile` writes for a small fixture studio that uses every
contract feature (tests/fixtures/codegen/studio): a codegen change shows up in review as a
snapshot diff. The example studio is not snapshotted here: generated/ is its compiled form, kept
current by test_codegen_build.

Update with `python -m pytest tests/compiler/test_codegen_snapshots.py --snapshot-update` and review the diff.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from skillc.compiler import build

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "codegen" / "studio"
SKILLS = ["Fx.Odd-Key", "fx.doc.find", "fx.doc.save", "fx.report.compose"]  # fx.broken does not load
FILES = ["manifest.json", "agents/odd.json", "agents/writer.json", *(f"skills/{build.file_stem(k)}.py" for k in SKILLS)]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("compiled")
    result = build.compile_studio(FIXTURE, out)
    assert list(result.rejected) == ["fx.broken"]
    return out


def test_exactly_these_files(compiled: Path) -> None:
    written = sorted(p.relative_to(compiled).as_posix() for p in compiled.rglob("*") if p.is_file() and p.name != build.STAMPS)
    assert written == sorted(FILES)


@pytest.mark.parametrize("rel", FILES)
def test_compiled_file(rel: str, compiled: Path, snapshot) -> None:  # noqa: ANN001 - syrupy fixture
    assert (compiled / rel).read_text(encoding="utf-8") == snapshot


def test_odd_names_fall_back_to_hashes(compiled: Path) -> None:
    """A key that is not a portable file name, and tool/argument names that are not identifiers."""
    stem = build.file_stem("Fx.Odd-Key")
    assert stem.startswith("_fx.odd-key.")
    text = (compiled / f"skills/{stem}.py").read_text(encoding="utf-8")
    assert 'TOOLS["doc-get.v2"] = rt.ToolMeta(' in text and "def _0x" in text and "_doc_id__PROVENANCE" in text
