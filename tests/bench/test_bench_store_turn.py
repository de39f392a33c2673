"""bench/store_turn.py really books on both stores and prints what its README section reads: a row
per store with CPU, its split between the loop's thread and the others, and wall time, then the
ratio line."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from pg_cluster import postgres_cluster  # noqa: F401  (a fixture: skips with the reason without PostgreSQL)

_BENCH = Path(__file__).resolve().parents[2] / "bench" / "store_turn.py"
_CELL = r"\s+([\d.]+) \(([\d.]+)-([\d.]+)\)"


def test_the_store_turn_bench_books_on_sqlite_and_postgres(postgres_cluster: object) -> None:  # noqa: F811
    done = subprocess.run([sys.executable, str(_BENCH), "--rounds", "2", "--turns", "3"], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = {}
    for store in ("sqlite", "postgres"):
        found = re.search(rf"^{store}{_CELL * 4}$", done.stdout, re.M)
        assert found, done.stdout
        cpu, loop, other, wall = (float(found.group(1 + 3 * i)) for i in range(4))
        assert 0 < cpu and 0 < wall and abs(cpu - loop - other) < 0.05, found.group(0)
        rows[store] = cpu
    ratio = re.search(r"^PostgreSQL / SQLite: CPU ([\d.]+)x, wall ([\d.]+)x$", done.stdout, re.M)
    assert ratio and abs(float(ratio.group(1)) - rows["postgres"] / rows["sqlite"]) < 0.02, done.stdout
    assert "round 2/2" in done.stderr  # progress on long work
