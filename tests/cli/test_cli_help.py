"""`skillc --help` teaches every command: each registered command (and each sub-command of one
that has them, e.g. `studio serve`) appears in the top-level help as an example line."""
from __future__ import annotations

import argparse
import re

from skillc.main import COMMANDS, build_parser


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parsers of `parser`'s sub-commands, by name."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def test_every_registered_command_has_an_example_in_the_top_level_help() -> None:
    parser = build_parser()
    text = parser.format_help()
    examples = [line.strip() for line in text.splitlines() if re.match(r"^\s+skillc [a-z]", line)]
    commands = _subcommands(parser)
    assert set(commands) == set(COMMANDS)  # every command module is installed and registered
    for name, command in commands.items():
        assert any(e == f"skillc {name}" or e.startswith(f"skillc {name} ") for e in examples), name
        for sub in _subcommands(command):
            assert any(e.startswith(f"skillc {name} {sub}") for e in examples), f"{name} {sub}"
