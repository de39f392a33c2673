"""`skillc schema`: print the JSON Schema of skill_contract (for editors)."""
from __future__ import annotations

import argparse
import json
import sys

HELP = "print the JSON Schema of skill_contract, for editors"
DESCRIPTION = """\
Print a JSON Schema (draft 2020-12) of skill_contract as authors write it, generated from the
compiler's IR. Point an editor at it for completion and checks of contract.jsonc files.

examples:
  skillc schema -o .vscode/skill-contract.schema.json
  skillc schema | jq '.properties | keys'

exit status: 0 ok, 2 the output file cannot be written."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc schema`."""
    parser.add_argument("-o", "--output", help="write to this file instead of standard output")


def run(args: argparse.Namespace) -> int:
    """Print (or write) the schema; returns the exit status."""
    from skillc.compiler.schema import contract_json_schema

    text = json.dumps(contract_json_schema(), ensure_ascii=False, indent=2) + "\n"
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            print(f"skillc schema: error: {exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(text)
    return 0
