"""PEP 561: the installed `skillc` and `skillc.runtime` packages say they ship type hints, so a
project embedding the runtime gets its signatures checked by mypy (pyproject's package-data lists
the markers; this keeps the files themselves from going missing)."""
from __future__ import annotations

from importlib import resources

import pytest


@pytest.mark.parametrize("package", ["skillc", "skillc.runtime"])
def test_package_has_a_py_typed_marker(package: str) -> None:
    marker = resources.files(package) / "py.typed"
    assert marker.is_file(), f"{package} lacks py.typed"
