"""Finding 12: diagnostics linear in the input. A one-line contract with 4,000 unknown keys took
more than 8 s of CPU in `skillc check` (each diagnostic split the whole text and quoted the whole
80 kB line); the same keys one per line took under 1 s. An excerpt is now a window around its span
and the text is split once, so both layouts cost about the same."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from skillc.main import run as skillc

TAG = "cms.article.tag"
KEYS = 4000


def _check_cpu(studio: Path, contract: str, capsys: pytest.CaptureFixture[str]) -> tuple[float, str]:
    (studio / "skills" / TAG / "contract.jsonc").write_text(contract, encoding="utf-8")
    began = time.process_time()
    skillc(["check", str(studio)])
    spent = time.process_time() - began
    out = capsys.readouterr()
    return spent, out.out + out.err


def test_a_one_line_contract_with_4000_unknown_keys_is_diagnosed_in_linear_time(
        studio: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = [f'"unknownKey{i}": 1' for i in range(KEYS)]
    per_line, text_lines = _check_cpu(studio, '{ "tools": {},\n' + ",\n".join(keys) + "\n}\n", capsys)
    one_line, text_one = _check_cpu(studio, '{ "tools": {}, ' + ", ".join(keys) + " }", capsys)
    assert "Traceback" not in text_one and "unknownKey3999" in text_one
    assert len(text_one) < 3 * len(text_lines), (len(text_one), len(text_lines))  # no 80 kB line per diagnostic
    # CPU time, not wall time: the machine is shared. Linear means within a small factor of the
    # same keys laid out one per line (before: 8 s against 1 s).
    assert one_line < 3 * per_line + 1.0, (one_line, per_line)
