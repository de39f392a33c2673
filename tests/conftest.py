"""Fixtures shared by the whole suite.

One import style: pytest puts tests/ on sys.path (rootdir conftest, no __init__.py), so shared
code is imported as `helpers.<module>` (never `tests.helpers.<module>`: one module under two names
is two copies, two `Harness` classes at once). tests/test_layout.py checks it.
"""
from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from helpers.conformance import REASON, conformance_dir, load_checker


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line per reason for the skipped tests, so `-q` says why (a fresh clone skips the tests
    that need the shared conformance files, which live beside the repository, not in it)."""
    from collections import Counter

    reasons: Counter[str] = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        reasons[str(reason).removeprefix("Skipped: ")] += 1
    if not reasons:
        return
    terminalreporter.write_sep("-", "why tests were skipped")
    for reason, number in reasons.most_common():
        terminalreporter.write_line(f"{number} skipped: {reason}")


@pytest.fixture
def conformance() -> Path:
    """The shared conformance folder (check.py, public/); skips the test when it is absent."""
    folder = conformance_dir()
    if folder is None:
        pytest.skip(REASON)
    return folder


@pytest.fixture
def checker() -> ModuleType:
    """check.py imported as a module; skips the test when it is absent."""
    module = load_checker()
    if module is None:
        pytest.skip(REASON)
    return module


@pytest.fixture
def studio(tmp_path: Path) -> Path:
    """A copy of examples/studio under tmp_path, for a test that damages one of its records."""
    import shutil

    root = tmp_path / "studio"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "studio", root)
    return root


@pytest.fixture(scope="module")
def compiled_example(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The bundled example studio compiled and loaded, once per test module."""
    from helpers.example_session import example_studio

    return example_studio(tmp_path_factory.mktemp("compiled"))
