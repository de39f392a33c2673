"""The peers table: per framework and mode, overhead per tool call over the rounds, and ratios.

Each round gives one value per (framework, mode): the median of that subprocess's turns. A row
is the median of its rounds with the spread (min-max), and its ratio to skillc in the same mode
(how many times skillc's figure the peer's is: above 1, skillc is leaner). The closing line takes
the best peer, the one nearest skillc over every mode, the stricter reading of "best peer".
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

SKILLC = "skillc"
TARGET = 5.0


@dataclass(frozen=True)
class Row:
    """One framework in one mode: every round's value (seconds per tool call)."""

    framework: str
    mode: str
    values: tuple[float, ...]

    @property
    def median(self) -> float:
        """The median of the rounds."""
        return statistics.median(self.values)


def ratio(row: Row, rows: list[Row]) -> float | None:
    """`row`'s median over skillc's in the same mode (None without a skillc row or for skillc's)."""
    base = next((r for r in rows if r.framework == SKILLC and r.mode == row.mode and r.values), None)
    if base is None or row.framework == SKILLC or not row.values or base.median <= 0:
        return None
    return row.median / base.median


def best_peer(rows: list[Row]) -> tuple[float, Row] | None:
    """The smallest ratio to skillc over all peers and modes, with its row (None without one)."""
    found = [(r, row) for row in rows if (r := ratio(row, rows)) is not None]
    return min(found, key=lambda pair: pair[0]) if found else None


def best_by_mode(rows: list[Row]) -> list[tuple[str, float, Row]]:
    """(mode, ratio, row) of the peer nearest skillc in each mode that has one, in table order."""
    out: list[tuple[str, float, Row]] = []
    for mode in dict.fromkeys(row.mode for row in rows):
        best = best_peer([row for row in rows if row.mode == mode])
        if best is not None:
            out.append((mode, *best))
    return out


def render(rows: list[Row], rounds: int, calls: int) -> str:
    """The table as printed."""
    lines = [f"peers: the same {calls}-tool-call turn (scripted model, fixed JSON tool), "
             f"median (min-max) of {rounds} round-robin rounds, each a subprocess",
             "overhead per tool call = (turn wall time - time in the model double - time in the tools) / calls;",
             "served = the loopback client's turn time / calls, nothing taken out",
             "",
             f"  {'framework':<16} {'mode':<8} {'per tool call':>14}  {'spread':<18} {'vs skillc':>9}"]
    for row in rows:
        if not row.values:
            lines.append(f"  {row.framework:<16} {row.mode:<8} {'failed':>14}  (every round; the reasons are on stderr)")
            continue
        r = ratio(row, rows)
        spread = f"({min(row.values) * 1000:.3f}-{max(row.values) * 1000:.3f})"
        short = f"  [{len(row.values)} of {rounds} rounds]" if len(row.values) < rounds else ""
        lines.append(f"  {row.framework:<16} {row.mode:<8} {row.median * 1000:>11.3f} ms  {spread:<18} "
                     f"{'' if r is None else f'{r:.1f}x':>9}{short}")
    best = best_peer(rows)
    lines.append("")
    if best is None:
        lines.append("skillc vs best peer per tool call: no peer measured")
    else:
        r, row = best
        verdict = "MET" if r >= TARGET else "MISSED"
        lines.append("best peer per mode: " + "; ".join(f"{mode} {b.framework} {x:.1f}x"
                                                        for mode, x, b in best_by_mode(rows)))
        lines.append(f"skillc vs best peer per tool call: {r:.1f}x (target ≥ {TARGET:g}x) {verdict}"
                     f"  [best: {row.framework}, {row.mode}]")
    return "\n".join(lines)
