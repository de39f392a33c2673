"""The rule language against the public CEL conformance files (google/cel-spec, tests/simple/
testdata: basic, comparisons, logic, integer_math, lists, macros, string, timestamps), for the
subset skillc supports: every test is compiled and run exactly as `skillc rules eval` does, and
the pass rate is printed per file (`pytest -s` shows it).

The files are not part of this repository: give their folder with SKILLC_CEL_SPEC_DIR (or keep
them at ../shared/cel-spec/tests/simple/testdata); without them the test is skipped, saying so.
What the subset leaves out (unsigned ints, bytes, protocol buffer messages, `type()`) must be a
clear compile error, counted as unsupported; a wrong answer fails the test.
"""
from __future__ import annotations

from collections import Counter

import pytest

from helpers.celspec import FILES, REASON, run_file, spec_dir


@pytest.mark.parametrize("name", FILES)
def test_cel_conformance_file(name: str) -> None:
    folder = spec_dir()
    if folder is None:
        pytest.skip(REASON)
    outcomes = run_file(folder / f"{name}.textproto")
    counts = Counter(o.result for o in outcomes)
    decided = counts["pass"] + counts["wrong"]
    print(f"\nCEL conformance {name}: {counts['pass']}/{len(outcomes)} pass "
          f"({100 * counts['pass'] / len(outcomes):.0f}%; {100 * counts['pass'] / max(decided, 1):.0f}% of the "
          f"supported), {counts['unsupported']} unsupported, {counts['stricter']} refused at compile time "
          f"(CEL checks them only at run time), {counts['wrong']} wrong")
    assert outcomes, f"no tests read from {name}.textproto"
    wrong = [f"{o.section}/{o.name}: {o.expr!r}: {o.detail}" for o in outcomes if o.result == "wrong"]
    assert wrong == [], "\n".join(wrong)
