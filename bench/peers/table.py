"""The peers tables: per framework, setup and mode, overhead per tool call over the rounds, and ratios.

Each round gives one value per (framework, setup, mode): the median of that subprocess's turns. A
row is the median of its rounds with the spread (min-max), and its ratio to skillc's row (its
store on a SQLite file) in the same mode: how many times skillc's figure the row's is (above 1,
skillc is leaner). Two tables share that skillc row:

- as shipped: the peers as they come, keeping nothing (plus skillc's store on `:memory:`, so the
  reader sees the file's share of skillc's figure);
- with persistence: each peer keeping its turn in a SQLite file its own documented way.

Each table closes with the best peer of each mode and the peer nearest skillc over every mode,
the stricter reading of "best peer", judged against the target.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

SKILLC = "skillc"
TARGET = 5.0
# What a turn keeps (scenario.py's `--persist` words; this module imports nothing of the bench).
NONE, SQLITE, MEMORY = "none", "sqlite", "memory"
SHIPPED, PERSISTED = "as shipped", "with persistence"
# Served rows with nothing taken out (the client's wall time per call): shown, not judged; the
# app's model double and tools are not the same work on both sides (skillc's tool is an MCP
# server in its process, Pydantic AI's a function), which the judged served row takes out.
RAW = "raw"
TITLES = {SHIPPED: "as shipped: skillc's store on a SQLite file; the peers keep nothing",
          PERSISTED: "with persistence: every framework keeps the turn in a SQLite file, its own way"}


@dataclass(frozen=True)
class Row:
    """One framework with one setup in one mode: every round's value (seconds per tool call)."""

    framework: str
    mode: str
    values: tuple[float, ...]
    persist: str = NONE

    @property
    def median(self) -> float:
        """The median of the rounds."""
        return statistics.median(self.values)

    @property
    def label(self) -> str:
        """The row's name: the framework, and its setup where it is not the default one."""
        if self.framework == SKILLC:
            return SKILLC + (" :memory:" if self.persist == MEMORY else "")
        return self.framework + (" +sqlite" if self.persist == SQLITE else "")

    @property
    def is_base(self) -> bool:
        """skillc as deployed (its store on a file): the row every ratio is taken to."""
        return self.framework == SKILLC and self.persist != MEMORY


def tables_of(row: Row) -> tuple[str, ...]:
    """The tables `row` is shown in."""
    if row.is_base:
        return (SHIPPED, PERSISTED)
    if row.framework == SKILLC or row.persist == NONE:
        return (SHIPPED,)
    return (PERSISTED,)


def ratio(row: Row, rows: list[Row]) -> float | None:
    """`row`'s median over skillc's (store on a file) in the same mode; None without that row,
    or for that row itself."""
    base = next((r for r in rows if r.is_base and r.mode == row.mode and r.values), None)
    if base is None or row.is_base or not row.values or base.median <= 0:
        return None
    return row.median / base.median


def best_peer(rows: list[Row]) -> tuple[float, Row] | None:
    """The smallest ratio to skillc over all peers and modes, with its row (None without one)."""
    found = [(r, row) for row in rows
             if row.framework != SKILLC and row.mode != RAW and (r := ratio(row, rows)) is not None]
    return min(found, key=lambda pair: pair[0]) if found else None


def best_by_mode(rows: list[Row]) -> list[tuple[str, float, Row]]:
    """(mode, ratio, row) of the peer nearest skillc in each mode that has one, in table order."""
    out: list[tuple[str, float, Row]] = []
    for mode in dict.fromkeys(row.mode for row in rows):
        best = best_peer([row for row in rows if row.mode == mode])
        if best is not None:
            out.append((mode, *best))
    return out


def _line(row: Row, rows: list[Row], rounds: int) -> str:
    if not row.values:
        return f"  {row.label:<22} {row.mode:<8} {'failed':>14}  (every round; the reasons are on stderr)"
    r = ratio(row, rows)
    spread = f"({min(row.values) * 1000:.3f}-{max(row.values) * 1000:.3f})"
    short = f"  [{len(row.values)} of {rounds} rounds]" if len(row.values) < rounds else ""
    return (f"  {row.label:<22} {row.mode:<8} {row.median * 1000:>11.3f} ms  {spread:<18} "
            f"{'' if r is None else f'{r:.1f}x':>9}{short}").rstrip()


def verdict(rows: list[Row]) -> list[str]:
    """The closing lines of one table: the best peer of each mode, and the target judged."""
    best = best_peer(rows)
    if best is None:
        return ["skillc vs best peer per tool call: no peer measured"]
    r, row = best
    return ["best peer per mode: " + "; ".join(f"{mode} {b.label} {x:.1f}x" for mode, x, b in best_by_mode(rows)),
            f"skillc vs best peer per tool call: {r:.1f}x (target ≥ {TARGET:g}x) "
            f"{'MET' if r >= TARGET else 'MISSED'}  [best: {row.label}, {row.mode}]"]


def render(rows: list[Row], rounds: int, calls: int) -> str:
    """The tables as printed (a table none of whose peers was measured is left out)."""
    lines = [f"peers: the same {calls}-tool-call turn (scripted model, fixed JSON tool), "
             f"median (min-max) of {rounds} round-robin rounds, each a subprocess",
             "overhead per tool call = (turn wall time - time in the model double - time in the tools) / calls;",
             "served = the loopback client's turn time, less the app's own clock of its model double and tools, / calls",
             "(raw = the client's turn time / calls, nothing taken out: shown, not judged); "
             "vs skillc = the row's median / skillc's (store on a file), same mode"]
    for name in (SHIPPED, PERSISTED):
        mine = [row for row in rows if name in tables_of(row)]
        if not any(row.framework != SKILLC for row in mine) and name == PERSISTED:
            continue
        lines += ["", TITLES[name],
                  f"  {'framework':<22} {'mode':<8} {'per tool call':>14}  {'spread':<18} {'vs skillc':>9}"]
        lines += [_line(row, mine, rounds) for row in mine]
        lines += [""] + [f"{name}: {text}" for text in verdict(mine)]
    return "\n".join(lines)
