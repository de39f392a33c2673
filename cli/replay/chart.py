"""The replay report's chart: one horizontal stacked bar per row (all calls, writes, each tool),
split by verdict, as inline SVG text (no script, no external file, every label escaped)."""
from __future__ import annotations

from html import escape

from skillc.runtime.words.vocab import Verdict

# verdict -> (label, colour); the order is the bars' order from left to right
SERIES: tuple[tuple[Verdict, str, str], ...] = (
    (Verdict.ALLOWED, "allowed", "#3a9d5d"),
    (Verdict.REPLAYED, "replayed", "#7fb7d9"),
    (Verdict.APPROVAL_ASKED, "approval asked", "#e0a526"),
    (Verdict.REFUSED, "refused", "#d0453a"),
)
ROW, BAR, LABEL_W, BAR_W, COUNT_W = 26, 16, 220, 620, 60


def _clip(text: str, n: int = 32) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def stacked_bars(rows: list[tuple[str, dict[str, int]]], title: str) -> str:
    """An SVG of `rows` (name, counts by verdict): each bar as long as the largest row's calls."""
    largest = max([r["calls"] for _, r in rows] + [1])
    height = ROW * len(rows) + 46
    width = LABEL_W + BAR_W + COUNT_W
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" class="chart"><title>{escape(title)}</title>']
    for i, (name, counts) in enumerate(rows):
        y = i * ROW + 4
        out.append(f'<text x="{LABEL_W - 8}" y="{y + BAR - 3}" text-anchor="end" class="label">'
                   f'<title>{escape(name)}</title>{escape(_clip(name))}</text>')
        x = float(LABEL_W)
        for verdict, label, colour in SERIES:
            n = counts.get(str(verdict), 0)
            if not n:
                continue
            w = BAR_W * n / largest
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{max(w, 1):.1f}" height="{BAR}" fill="{colour}">'
                       f'<title>{escape(name)}: {n} {label}</title></rect>')
            x += w
        out.append(f'<text x="{x + 6:.1f}" y="{y + BAR - 3}" class="count">{counts["calls"]}</text>')
    y = ROW * len(rows) + 16
    x = float(LABEL_W)
    for _, label, colour in SERIES:
        out.append(f'<rect x="{x:.0f}" y="{y}" width="12" height="12" fill="{colour}"/>'
                   f'<text x="{x + 16:.0f}" y="{y + 11}" class="legend">{label}</text>')
        x += 22 + 7.5 * len(label)
    out.append("</svg>")
    return "".join(out)
