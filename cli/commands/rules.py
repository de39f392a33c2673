"""`skillc rules eval`: compile one rule expression as a contract would and run it on given values."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HELP = "try a rule expression (CEL subset) before it goes into a contract"
DESCRIPTION = """\
Compile one rule expression exactly as a tool contract's `rules` are compiled (parse, type
check, generate Python) and run it on the values given; print its value, or the error with a
caret under the place in the expression. The language is in docs/reference/rules.md.

--vars is a JSON object (inline, or a file name, or - for standard input) with any of:
  args      the call's arguments             {"order_id": "W1", "reason": "no longer needed"}
  platform  the platform fields              {"userId": 7}
  shared    the task's shared values
  inputs    the node's inputs
  now       the clock, RFC 3339 text         "2027-01-01T09:00:00Z"
  evidence  {tool: [response bodies, newest first]}, read by evidence.TOOL and latest.TOOL
Any other key is a variable of that name.

examples:
  skillc rules eval "1 + 2 * 3"
  skillc rules eval "args.reason in ['no longer needed', 'ordered by mistake']" \\
      --vars '{"args": {"reason": "changed my mind"}}'
  skillc rules eval "latest.get_order.status == 'pending'" \\
      --vars '{"evidence": {"get_order": [{"id": "W1", "status": "delivered"}]}}'
  skillc rules eval "now - timestamp(latest.get_order.placed_at) < duration('24h')" --vars vars.json
  skillc rules eval "sum(args.payments.map(p, decimal(p.amount))) == decimal('0.3')" \\
      --vars '{"args": {"payments": [{"amount": 0.1}, {"amount": 0.2}]}}'
  skillc rules eval "origin(args.payment_method_id).balance >= 10" --vars vars.json --code

exit status: 0 the expression was decided (its value is printed; for a rule, true or false),
1 it does not compile or cannot be decided on these values, 2 bad invocation (--vars unreadable)."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc rules`."""
    sub = parser.add_subparsers(dest="rules_command", metavar="SUBCOMMAND", required=True)
    ev = sub.add_parser("eval", help="compile one expression and print its value or its error",
                        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    ev.add_argument("expression", help="the rule expression, e.g. \"args.qty > 0\"")
    ev.add_argument("--vars", metavar="FILE|JSON", help="the values the expression sees (see above)")
    ev.add_argument("--code", action="store_true", help="also print the Python the expression compiles to")
    ev.add_argument("--json", action="store_true", help="print the result as one JSON object")


def _vars(spec: str | None) -> dict[str, Any]:
    if spec is None:
        return {}
    text = sys.stdin.read() if spec == "-" else (spec if spec.lstrip().startswith("{") else Path(spec).read_text(encoding="utf-8"))
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("--vars must be a JSON object")
    return value


def _caret(text: str, start: int, end: int) -> str:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line = text[line_start:line_end if line_end >= 0 else len(text)]
    width = max(1, min(end, line_start + len(line)) - start)
    return f"  {line}\n  {' ' * (start - line_start)}^{'~' * (width - 1)}"


def run(args: argparse.Namespace) -> int:
    """Evaluate and print; returns the exit status."""
    from skillc.compiler.rules_eval import eval_expression, show

    try:
        variables = _vars(args.vars)
    except (OSError, ValueError) as exc:
        print(f"skillc rules eval: error: --vars: {exc}", file=sys.stderr)
        return 2
    try:
        result = eval_expression(args.expression, variables)
    except ValueError as exc:  # a value in --vars that is not what its name needs (now, evidence)
        print(f"skillc rules eval: error: --vars: {exc}", file=sys.stderr)
        return 2
    if args.json:
        out: dict[str, Any] = {"ok": result.ok}
        if result.ok:
            out["value"] = show(result.value)
        else:
            out.update(error=result.error, message=result.message)
            if result.error == "compile":
                out.update(start=result.start, end=result.end)
        if args.code:
            out["code"] = result.code
        print(json.dumps(out, ensure_ascii=False))
        return 0 if result.ok else 1
    if args.code and result.code:
        print(f"# python: {result.code}")
    for w in result.warnings:
        print(f"warning[{w.code}]: {w.message}\n{_caret(args.expression, w.start, w.end)}", file=sys.stderr)
    if result.error == "compile":
        print(f"error: {result.message}\n{_caret(args.expression, result.start, result.end)}", file=sys.stderr)
        return 1
    if result.error == "undecidable":
        print(f"undecidable: {result.message}", file=sys.stderr)
        return 1
    print(show(result.value))
    return 0
