"""The test suite's own layout: one import style for shared helpers, scenarios by topic."""
from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_helpers_are_imported_under_one_name() -> None:
    offenders = []
    for path in TESTS.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"^\s*(from tests[.\s]|import tests\b)", text, re.M):
            offenders.append(f"{path.relative_to(TESTS)}: {m.group(0).strip()}")
    assert not offenders, "import shared test code as helpers.<module> (see tests/conftest.py): " + ", ".join(offenders)


TOPICS = {"chain", "gate", "node", "outputs", "session", "planning", "delegation", "decisions"}


def test_scenario_folders_are_topics() -> None:
    folders = {p.name for p in (TESTS / "scenarios").iterdir() if p.is_dir()}
    assert folders <= TOPICS, f"scenario folders are named by topic ({sorted(TOPICS)}), not by author: {sorted(folders - TOPICS)}"
    assert all(any((TESTS / "scenarios" / t).glob("*.yaml")) for t in folders)


# tests/<folder> for each source folder it tests (CONTRIBUTING.md: Tests); besides these, only
# shared code and data: helpers/, fixtures/, scenarios/, typing/, __snapshots__/.
MIRRORS = {"compiler", "runtime", "cli", "server", "store", "console", "bench"}
SUPPORT = {"helpers", "fixtures", "scenarios", "typing"}


def _test_files() -> list[Path]:
    return [p for p in TESTS.rglob("test_*.py")
            if not (set(p.relative_to(TESTS).parts[:-1]) & (SUPPORT | {"__snapshots__"}))]


def test_test_folders_mirror_the_source_tree() -> None:
    stray = sorted(str(p.relative_to(TESTS)) for p in _test_files()
                   if len(p.relative_to(TESTS).parts) > 1 and p.relative_to(TESTS).parts[0] not in MIRRORS)
    assert not stray, f"a test lives in the folder of the source folder it tests ({sorted(MIRRORS)}): {stray}"


# A top-level file with one of these prefixes tests one folder: it belongs in that folder.
PREFIXES = {"test_codegen_": "compiler", "test_frontend_": "compiler", "test_diff": "compiler",
            "test_cli_": "cli", "test_chat_": "cli", "test_serve_": "server", "test_scale_out": "server",
            "test_store_": "store", "test_console_": "console", "test_bench_": "bench",
            "test_session_": "runtime", "test_durable_": "runtime", "test_trace_": "runtime",
            "test_telemetry_": "runtime", "test_model_": "runtime", "test_replay_": "runtime or cli"}


def test_no_top_level_file_does_a_folders_job() -> None:
    misplaced = [f"{p.name} -> tests/{folder}/" for p in sorted(TESTS.glob("test_*.py"))
                 for prefix, folder in PREFIXES.items() if p.name.startswith(prefix)]
    assert not misplaced, "move these into the folder their prefix names: " + ", ".join(misplaced)


def test_test_file_names_are_unique() -> None:
    # no __init__.py in the test folders: pytest imports each file under its bare name, so two
    # files of one name in two folders would be one module (pytest stops with "import file mismatch")
    seen: dict[str, list[str]] = {}
    for p in TESTS.rglob("*.py"):
        if p.name != "conftest.py" and "helpers" not in p.relative_to(TESTS).parts:
            seen.setdefault(p.name, []).append(str(p.relative_to(TESTS)))
    twice = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not twice, f"a test module's name is unique across tests/: {twice}"
    assert not list(TESTS.rglob("__init__.py")), "test folders have no __init__.py (see tests/conftest.py)"


SLEEP = "time" + ".sleep("  # spelled in two parts so that this file does not match itself


def test_the_suite_waits_in_one_place() -> None:
    # one poll loop (helpers/wait.py: wait_for); a sleep anywhere else is a pause or a second copy
    sleepers = sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob("*.py")
                      if SLEEP in p.read_text(encoding="utf-8") and p != TESTS / "helpers" / "wait.py")
    assert not sleepers, f"wait on state with helpers.wait.wait_for, not time.sleep: {sleepers}"


def test_a_test_imports_only_siblings_of_its_own_folder() -> None:
    # `from test_x import fixture` finds test_x on sys.path only through the importing file's own
    # folder: a sibling in another folder would import or not depending on the collection order
    wrong = []
    for p in _test_files():
        for m in re.finditer(r"^\s*from (test_\w+) import", p.read_text(encoding="utf-8"), re.M):
            if not (p.parent / f"{m.group(1)}.py").exists():
                wrong.append(f"{p.relative_to(TESTS)} imports {m.group(1)}")
    assert not wrong, "a test imports a test module of its own folder only: " + ", ".join(wrong)
