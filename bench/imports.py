"""Import time of the runtime and of the CLI's run-time commands: what a cold `chat` or `serve`
start pays before its first turn (issue 10 item 10).

Each row imports one module in a fresh interpreter with `-X importtime` and reports the module's
cumulative import time, the best of N runs (the run least disturbed by other load), and whether
networkx / the mcp SDK / httpx were loaded on the way (none of them is needed before the first
turn uses them).

    python bench/imports.py           # 7 runs per row
    python bench/imports.py --runs 3
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile

ROWS = (
    ("skillc.runtime", "the runtime package (generated modules import its support)"),
    ("skillc.runtime.session", "the runtime: Runtime, Session and everything a turn runs"),
    ("skillc.runtime.compiled.loader", "load_compiled: what loading a studio imports (networkx only for .graph)"),
    ("skillc.runtime.opener", "open_runtime"),
    ("skillc.commands.chat", "`skillc chat`'s command module"),
    ("skillc.chat", "`skillc chat` itself"),
    ("skillc.commands.serve", "`skillc serve`'s command module"),
)
HEAVY = ("networkx", "mcp", "httpx", "lark")
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def measure(module: str) -> tuple[float, set[str]]:
    """(cumulative seconds, heavy packages loaded) for one cold import of `module`."""
    # from a neutral folder: the checkout's own folders on sys.path would slow every lookup
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                          capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    total, loaded = 0.0, set()
    for line in done.stderr.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        name = m.group(4)
        if name == module:
            total = int(m.group(2)) / 1e6
        if name in HEAVY:
            loaded.add(name)
    return total, loaded


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    print(f"{'module':32} {'best ms':>8}  heavy imports   what")
    for module, what in ROWS:
        runs = [measure(module) for _ in range(args.runs)]
        best = min(t for t, _ in runs)
        heavy = ",".join(sorted(set().union(*(h for _, h in runs)))) or "-"
        print(f"{module:32} {best * 1000:8.1f}  {heavy:14}  {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
