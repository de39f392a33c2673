"""README's "Business rules in a contract": each `$ skillc rules eval …` line prints what the
README says it prints (standard output and standard error together, as a terminal shows them)."""
from __future__ import annotations

import shlex

import pytest

from helpers import readme
from skillc.main import run as skillc


def _sessions() -> list[tuple[str, str]]:
    block = readme.blocks(readme.section("Business rules in a contract"), "console")[0]
    out: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        else:
            out[-1][1].append(line)
    return [(cmd, "\n".join(lines)) for cmd, lines in out]


def test_the_section_shows_rules_eval() -> None:
    assert len(_sessions()) >= 3


@pytest.mark.parametrize("command,shown", _sessions(), ids=[c for c, _ in _sessions()])
def test_each_rules_eval_line_prints_what_the_readme_shows(command: str, shown: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    argv = shlex.split(command)
    assert argv[:3] == ["skillc", "rules", "eval"]
    status = skillc(argv[1:])
    captured = capsys.readouterr()
    assert (captured.out + captured.err).rstrip("\n") == shown
    assert status == (0 if not shown.startswith("error") else 1)
