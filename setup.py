"""Maps the top-level folders (cli/, compiler/, runtime/, grammar/, examples/, generated/) into the one `skillc` namespace."""
from __future__ import annotations

import os

from setuptools import setup

ROOTS = {"skillc": "cli", "skillc.grammar": "grammar", "skillc.compiler": "compiler",
         "skillc.runtime": "runtime", "skillc.generated": "generated", "skillc.examples": "examples"}


def _packages() -> tuple[list[str], dict[str, str]]:
    packages, package_dir = [], {}
    for name, folder in ROOTS.items():
        for here, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
            if "__init__.py" not in files:
                continue
            rel = os.path.relpath(here, folder)
            pkg = name if rel == "." else name + "." + rel.replace(os.sep, ".")
            if pkg in ROOTS and pkg != name:
                continue
            packages.append(pkg)
            package_dir[pkg] = here
    return packages, package_dir


PACKAGES, PACKAGE_DIR = _packages()
setup(packages=PACKAGES, package_dir=PACKAGE_DIR)
