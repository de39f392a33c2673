"""Compare a benchmark between an earlier revision and the working tree, side by side in one run.

    python bench/compare.py --base f8a1ee3 chain.py --quick
    python bench/compare.py --base f8a1ee3 --base-args "--sessions 200" turns.py --sessions 200 --turns 105
    python bench/compare.py --peers [--rounds 3] [--calls 5]     # skillc beside its peers (bench/peers/)

The earlier revision is exported (`git archive`) and installed into a private directory once
(cached under $XDG_CACHE_HOME/skillc-bench/<commit>); then each round runs the benchmark script
*as it was in that revision* against that install, and the working tree's script against the
working tree, one after the other (which goes first alternates from round to round), so both see
the same machine at nearly the same moment. Rows are matched by their whole label (the text before
the first number no word follows, counts inside it included), a ratio further along a row ("1.22x
of none per round") by the label and its words; each side keeps every round's value and the table gives the median with its spread
(min-max over the rounds), so one lucky or unlucky round moves nothing. A row one side does not
print is listed apart.

Not a test: it prints one table. "before" figures quoted in a closing note come from here.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# "  label text      123.4 µs   …" / "label text      140.8" / "label    12.5 %". The value is the
# first number after two spaces with a unit or no word after it ("call with  5 rules …  98.1 µs":
# the label runs to "…)", the count inside it is part of it).
ROW = re.compile(r"^\s*(?P<label>[^\s\d].*?\S)\s{2,}(?P<value>-?\d[\d,]*(?:\.\d+)?)"
                 r"(?:\s*(?P<unit>µs|ms|s|%|KiB|MiB|x)(?:\s|$)|(?=\s*$|\s{2,}|\s+[^\sA-Za-z]))")
# a ratio further along such a row ("   1.22x of none per round (…)"): a row of its own
RATIO = re.compile(r"\s{2,}(?P<value>\d+(?:\.\d+)?)x (?P<words>[A-Za-z][A-Za-z ]*?)\s*(?:\(|$)")
HIGHER_IS_BETTER = ("per second", "turns/s", "faster")


# A `|` table (bench/serve.py): the leading cells up to the last one that is not a number name
# the row, every later cell is a value, its column's header the value's name and unit.
CELL = re.compile(r"^(?P<value>-?\d[\d,]*(?:\.\d+)?)(?:\s*\([^)]*\))?$")
UNIT = re.compile(r"^(?P<name>.*?)\s+(?P<unit>µs|ms|s|%|KiB|MiB|x)$")
# A sentence of figures: "added CPU per tool call (how): 2.10 (2.07-2.39) ms" or
# "mean turn: in-process 2.66 ms, served 9.00 ms" (a name before each value, a unit after it). The
# parenthesis may hold a colon ("(sequential, paired turns: served − in-process, …)") and one
# level of parentheses: the label ends at the first colon outside them.
SENTENCE = re.compile(r"^(?P<label>[^\s(][^:(]*?)(?:\s+\((?:[^()]|\([^()]*\))*\))?:\s+(?P<rest>.*)$")
FIGURE = re.compile(r"(?:^|,\s+)(?:(?P<name>[A-Za-z][\w-]*)\s+)?(?P<value>-?\d[\d,]*(?:\.\d+)?)"
                    r"(?:\s+\([^)]*\))?\s+(?P<unit>µs|ms|s)\b")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _table_rows(header: list[str], cells: list[str]) -> dict[str, tuple[float, str]]:
    """The values of one data row of a `|` table, labelled "<key cells>: <column>"."""
    numeric = [CELL.match(c) is not None for c in cells]
    keys = max((i for i, n in enumerate(numeric) if not n), default=-1) + 1
    if keys == 0 or keys == len(cells) or len(cells) != len(header):
        return {}
    name = ", ".join(f"{h} {c}" if CELL.match(c) else c for h, c in zip(header[:keys], cells[:keys]))
    out: dict[str, tuple[float, str]] = {}
    for column, cell in zip(header[keys:], cells[keys:]):
        m = CELL.match(cell)
        if m is None:
            continue
        u = UNIT.match(column)
        label, unit = (u.group("name"), u.group("unit")) if u and u.group("name") else (column, "")
        out[f"{name}: {label}"] = (_number(m.group("value")), unit)
    return out


def rows(text: str) -> dict[str, tuple[float, str]]:
    """label -> (value, unit) for every line that reads as a table row: aligned "label  value unit"
    rows, the data rows of a `|` table, and sentences of figures with their units."""
    out: dict[str, tuple[float, str]] = {}
    header: list[str] | None = None
    for line in text.splitlines():
        if "|" in line:
            cells = [c.strip() for c in line.split("|")]
            if header is None and not any(CELL.match(c) for c in cells):
                header = cells
            elif header is not None:
                for label, figure in _table_rows(header, cells).items():
                    out.setdefault(label, figure)
            continue
        if header is not None and not line.strip("-= "):
            continue  # the rule under a table's header
        header = None
        m = ROW.match(line)
        if m and not m.group("label").startswith(("target", "(")):
            out.setdefault(m.group("label"), (_number(m.group("value")), m.group("unit") or ""))
            for r in RATIO.finditer(line, m.end()):
                out.setdefault(f"{m.group('label')}: x {r.group('words')}", (_number(r.group("value")), "x"))
            continue
        s = SENTENCE.match(line)
        if s is None or s.group("label").startswith("target"):
            continue
        for f in FIGURE.finditer(s.group("rest")):
            label = s.group("label") + (f": {f.group('name')}" if f.group("name") else "")
            out.setdefault(label, (_number(f.group("value")), f.group("unit")))
    return out


def install(base: str) -> tuple[Path, Path, str]:
    """(source dir, site dir, full commit) of `base`, exported and installed once."""
    commit = subprocess.run(["git", "rev-parse", "--verify", base + "^{commit}"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "skillc-bench" / commit
    src, site = cache / "src", cache / "site"
    if not (cache / "ready").exists():
        print(f"installing {base} ({commit[:10]}) into {cache} (once) …", file=sys.stderr)
        cache.mkdir(parents=True, exist_ok=True)
        src.mkdir(exist_ok=True)
        archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                        "--disable-pip-version-check", "--target", str(site), str(src)], check=True)
        (cache / "ready").write_text(commit)
    return src, site, commit


def run(script: Path, args: list[str], cwd: Path, site: Path | None) -> str:
    """The script's output; `site` first on the path when running the earlier revision."""
    env = dict(os.environ)
    if site is not None:
        env["PYTHONPATH"] = str(site) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    probe = "import skillc, sys; sys.stdout.write(skillc.__file__)"
    where = subprocess.run([sys.executable, "-c", probe], env=env, cwd=cwd, capture_output=True, text=True).stdout
    expected = site if site is not None else ROOT
    if not where.startswith(str(expected)):
        raise SystemExit(f"skillc would be imported from {where!r}, not from {expected}")
    done = subprocess.run([sys.executable, str(script), *args], env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{script} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def summary(values: list[float]) -> tuple[float, float, float]:
    """(median, min, max) of one side's values of a row over the rounds."""
    return statistics.median(values), min(values), max(values)


def verdict(label: str, unit: str, base: float, head: float) -> str:
    """How many times better or worse `head` is; "" for a count, a share or a size."""
    higher = any(x in label for x in HIGHER_IS_BETTER)
    if base == 0 or head == 0 or not higher and unit not in ("µs", "ms", "s"):
        return ""
    ratio = head / base if higher else base / head  # > 1: the working tree is better
    return f"{ratio:5.2f}x {'better' if ratio >= 1 else 'worse'}"


def main() -> int:
    if "--peers" in sys.argv[1:]:  # the peers mode: skillc beside other frameworks (bench/peers/run.py)
        sys.path.insert(0, str(ROOT / "bench" / "peers"))
        import run as peers

        return peers.main(sys.argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--base", required=True, help="the earlier revision (a commit, tag or branch)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side, alternating (default 3)")
    parser.add_argument("--base-args", help="the base script's arguments when they differ (one string)")
    parser.add_argument("script", help="a script under bench/, e.g. chain.py")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    ns = parser.parse_args()
    src, site, commit = install(ns.base)
    old_script, new_script = src / "bench" / ns.script, ROOT / "bench" / ns.script
    for script in (old_script, new_script):
        if not script.exists():
            raise SystemExit(f"{script} does not exist")
    seen: dict[str, dict[str, tuple[list[float], str]]] = {"base": {}, "head": {}}
    sides = (("base", old_script, src, site), ("head", new_script, ROOT, None))
    for r in range(ns.rounds):
        for side, script, cwd, where in (sides if r % 2 == 0 else sides[::-1]):
            print(f"round {r + 1}/{ns.rounds}: {side} …", file=sys.stderr)
            args = shlex.split(ns.base_args) if side == "base" and ns.base_args is not None else ns.args
            for label, (value, unit) in rows(run(script, args, cwd, where)).items():
                seen[side].setdefault(label, ([], unit))[0].append(value)
    common = [label for label in seen["base"] if label in seen["head"]]
    width = max([len(label) for label in common] + [20])
    print(f"skillc bench/compare.py {ns.script} {' '.join(ns.args)}: base {ns.base} ({commit[:10]}) vs the "
          f"working tree, median (min-max) of {ns.rounds} alternating rounds")
    print(f"  {'row':{width}} {'base':>24} {'head':>24}   head vs base")
    for label in common:
        (bv, unit), (hv, _) = seen["base"][label], seen["head"][label]
        (b, b_lo, b_hi), (h, h_lo, h_hi) = summary(bv), summary(hv)
        print(f"  {label:{width}} {b:>10.3f}{unit:>3} ({b_lo:.3g}-{b_hi:.3g}) {h:>10.3f}{unit:>3} ({h_lo:.3g}-{h_hi:.3g})"
              f"   {verdict(label, unit, b, h)}")
    for side in ("base", "head"):
        only = [label for label in seen[side] if label not in seen["head" if side == "base" else "base"]]
        if only:
            print(f"  only in {side}: " + "; ".join(only))
    return 0


if __name__ == "__main__":
    sys.exit(main())
