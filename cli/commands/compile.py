"""`skillc compile [SOURCE] -o DIR`: validator modules, graph templates and a manifest."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from skillc.commands import CONFIG_HELP, SOURCE_HELP, load_source

HELP = "compile a studio into validator modules and agent graph templates"
DESCRIPTION = """\
Compile every ACTIVE skill of a studio into one Python validator module, and every agent into a
task-graph template, under DIR (skills/, agents/, manifest.json). Incremental: unchanged skills
are not regenerated (--force regenerates everything). With --check nothing is written: the
command prints a unified diff of what a compile would change and exits 1 when DIR is stale.

Large studios show progress on stderr ([n/total]).

examples:
  skillc compile examples/studio -o generated
  skillc compile examples/studio -o generated --check     in CI: fail when generated/ is stale
  skillc compile studio.sqlite -o build/compiled --force

exit status: 0 ok (or up to date), 1 some skill rejected (or DIR stale with --check),
2 bad invocation or unreadable source."""

_PROGRESS_FROM = 100  # studios smaller than this compile too fast to need a progress line


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc compile`."""
    parser.add_argument("source", nargs="?", help=SOURCE_HELP)
    parser.add_argument("--config", metavar="PATH", help=CONFIG_HELP)
    parser.add_argument("-o", "--output", default="generated", metavar="DIR", help="output directory (default: generated)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 with a diff when DIR is stale")
    parser.add_argument("--force", action="store_true", help="regenerate every skill")
    parser.add_argument("-q", "--quiet", action="store_true", help="print errors only")


def _progress(done: int, total: int, key: str) -> None:
    if total < _PROGRESS_FROM:
        return
    if sys.stderr.isatty():
        sys.stderr.write(f"\r[{done}/{total}] compiling {key[:60]:<60}")
        if done == total:
            sys.stderr.write("\n")
    elif done == total or done % max(total // 10, 1) == 0:
        sys.stderr.write(f"[{done}/{total}] skills compiled\n")
    sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    """Compile (or check) args.source into args.output; returns the exit status."""
    args.source, studio = load_source("compile", args.source, args.config)
    if studio is None:
        return 2
    from skillc.compiler.build import check_stale, compile_studio
    from skillc.compiler.diagnostics import count, render

    if args.check:
        diff = check_stale(studio, args.output)
        if diff:
            sys.stdout.writelines(line if line.endswith("\n") else line + "\n" for line in diff)
            print(f"skillc compile --check: {args.output} is stale: run `skillc compile {args.source} -o {args.output}`", file=sys.stderr)
            return 1
        print(f"{args.output} is up to date")
        return 0
    if os.path.exists(args.output) and not os.path.isdir(args.output):
        print(f"skillc compile: error: {args.output} exists and is not a directory", file=sys.stderr)
        return 2
    if len(studio.skills) >= _PROGRESS_FROM and not args.quiet:
        # The front end checks every changed skill before the first module is written.
        print(f"checking {len(studio.skills)} skills of {args.source} …", file=sys.stderr, flush=True)
    try:
        result = compile_studio(studio, args.output, progress=_progress, force=args.force)
    except OSError as exc:
        print(f"skillc compile: error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for d in result.diagnostics:
        if not args.quiet or d.is_error:
            print(render(d))
    totals = count(result.diagnostics)
    if not args.quiet:
        print(summary(args.source, args.output, result, totals))
    return 1 if result.rejected or totals["error"] else 0  # an agent the border refused is an error too


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def summary(source: str, output: str, result: Any, totals: dict[str, int]) -> str:
    """The last line of a compile. Skills are "regenerated" (compiled again) or "unchanged"
    (taken from the manifest); files are "written" (new bytes) or "already current" (a skill
    compiled again to the same bytes, e.g. the first build of a checked-out generated/)."""
    ok = len(result.manifest["skills"]) - len(result.rejected)
    current = f" ({len(result.unchanged)} already current)" if result.unchanged and result.regenerated else ""
    return (f"compiled {source} -> {output}: {_n(ok, 'skill')} loaded, {len(result.rejected)} rejected, "
            f"{_n(len(result.manifest['agents']), 'agent')}; {len(result.regenerated)} regenerated, "
            f"{len(result.reused)} unchanged; {_n(len(result.written), 'file')} written{current}, "
            f"{len(result.removed)} removed; {_n(totals['error'], 'error')}, {_n(totals['warning'], 'warning')}")
