"""Front-end throughput: contracts parsed + validated per second vs json.loads of the same texts.

The example studio's skills are repeated (renamed) up to 1,000 skills; every text is parsed with
the Lark LALR front end and validated, then the same texts with comments stripped go through
json.loads (C). Both are measured in this one run and printed as a ratio. Not a test.

    python bench/frontend.py [STUDIO] [--skills 1000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from pathlib import Path

from skillc.compiler import ir
from skillc.compiler.frontend import check_skill, check_studio
from skillc.compiler.parse import parse_contract
from skillc.compiler.sources import load_studio

DEFAULT_STUDIOS = ("examples/studio", "tests/fixtures/frontend/studio")


def strip_comments(text: str) -> str:
    """The JSON text without // and /* */ comments (string-aware), for json.loads."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def scaled(studio: ir.Studio, count: int) -> list[ir.SkillProfile]:
    """`count` skills cycling through the studio's own (renamed so each is a distinct skill)."""
    base = [s for s in studio.skills if s.skill_contract.strip()]
    return [base[i % len(base)].model_copy(update={"skill_key": f"{base[i % len(base)].skill_key}.{i}"}) for i in range(count)]


def timed(fn: Callable[[], object]) -> float:
    """One run of fn, in seconds, with the garbage collector paused (as timeit does)."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    finally:
        gc.enable()


def best_interleaved(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """The fastest of `repeat` rounds per measure; rounds interleave the measures so that load
    from other processes on a shared machine hits them alike."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            times[name].append(timed(fn))
    return {k: min(v) for k, v in times.items()}


def main() -> None:
    """Run the benchmark and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("studio", nargs="?")
    ap.add_argument("--skills", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    source = args.studio or next(s for s in DEFAULT_STUDIOS if Path(s).is_dir())
    studio = load_studio(source)
    skills = scaled(studio, args.skills)
    texts = [s.skill_contract for s in skills]
    stripped = [strip_comments(t) for t in texts]
    for s in stripped:
        json.loads(s)  # the baseline must accept every text

    t_first = timed(lambda: [check_skill(s) for s in skills])  # includes building the parsers
    t = best_interleaved({
        "json": lambda: [json.loads(t) for t in stripped],
        "parse": lambda: [parse_contract(t) for t in texts],
        "front": lambda: [check_skill(s) for s in skills],
    }, args.repeat)
    t_json, t_parse, t_front = t["json"], t["parse"], t["front"]
    loaded = len(check_studio(ir.Studio(skills=skills)).contracts)
    n = len(skills)
    kb = sum(len(t) for t in texts) / 1024
    print(f"studio {source}: {len(studio.skills)} skills scaled to {n} ({kb:.0f} KiB of contract text, {loaded} loadable)")
    print(f"{'measure':<34}{'contracts/s':>14}{'ms/contract':>14}{'vs json.loads':>16}")
    rows = [
        ("json.loads (comments stripped)", t_json),
        ("parse to IR (Lark LALR)", t_parse),
        ("parse + validate", t_front),
        ("parse + validate, first pass", t_first),
    ]
    for name, secs in rows:
        print(f"{name:<34}{n / secs:>14,.0f}{1000 * secs / n:>14.3f}{secs / t_json:>15.1f}x")


if __name__ == "__main__":
    main()
