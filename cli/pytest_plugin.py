"""A pytest plugin: each scenario file is one test, run through the real runtime.

Installing skillc registers it (a `pytest11` entry point named after this module, so an explicit
`-p skillc.pytest_plugin` or `pytest_plugins = [...]` is harmless and is what works when
PYTEST_DISABLE_PLUGIN_AUTOLOAD is set). Files whose name matches an `skillc_scenarios` pattern (ini option; default
`*.scenario.yaml`; a pattern with a `/` matches `folder/name`, e.g. `scenarios/*.yaml`) are
collected; a test passes when every expectation of the file holds, and fails with the runner's
report (turn, expectation, nearest event). A file that cannot be run at all (its studio missing,
not a scenario) is an error of the test's set-up, not a failure, as `skillc scenario run` exits 2
for it. `--skillc-trace-dir DIR` keeps each file's trace.
"""
from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from skillc.runtime.words.errors import SkillcError

DEFAULT_PATTERNS = ["*.scenario.yaml"]


class ScenarioFailed(SkillcError):
    """A scenario's expectations did not hold; the message is the runner's report."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ini option naming scenario files, and where to keep traces."""
    parser.addini("skillc_scenarios", type="args", default=DEFAULT_PATTERNS,
                  help="patterns of skillc scenario files to run as tests (default: *.scenario.yaml)")
    parser.addoption("--skillc-trace-dir", metavar="DIR", default=None,
                     help="write each scenario's trace (JSON lines) to DIR/<file stem>.jsonl")


def _matches(path: Path, patterns: list[str]) -> bool:
    for pattern in patterns:
        subject = f"{path.parent.name}/{path.name}" if "/" in pattern else path.name
        if fnmatch(subject, pattern):
            return True
    return False


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect a scenario file as one test."""
    if file_path.suffix in (".yaml", ".yml") and _matches(file_path, parent.config.getini("skillc_scenarios")):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    """A scenario YAML file: one test, named after the scenario's `name:` (or the file)."""

    def collect(self) -> Any:
        """The file's single test."""
        import yaml

        try:
            data = yaml.safe_load(self.path.read_text(encoding="utf-8"))
            name = data.get("name") if isinstance(data, dict) else None
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            name = None  # the test itself reports the problem
        yield ScenarioItem.from_parent(self, name=str(name or self.path.stem))


class ScenarioItem(pytest.Item):
    """Runs one scenario file with `skillc scenario run`'s runner."""

    result: Any = None

    def setup(self) -> None:
        """Run the file (the runner runs it whole); one that cannot be run is this test's error."""
        from skillc.scenario.runner import report, run_files

        trace_dir = self.config.getoption("--skillc-trace-dir")
        trace = None
        if trace_dir:
            Path(trace_dir).mkdir(parents=True, exist_ok=True)
            trace = str(Path(trace_dir) / f"{self.path.stem}.jsonl")
        self.result = run_files([str(self.path)], trace_path=trace)[0]
        if self.result.error is not None:
            pytest.fail(report(self.result, verbose=True), pytrace=False)

    def runtest(self) -> None:
        """Fail with the runner's report unless every expectation held."""
        from skillc.scenario.runner import report

        if not self.result.ok:
            raise ScenarioFailed(report(self.result, verbose=True))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """The runner's report, not a traceback into skillc."""
        if isinstance(excinfo.value, ScenarioFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int, str]:
        """Where the test comes from, for pytest's report."""
        return self.path, 0, f"scenario {self.name}"
