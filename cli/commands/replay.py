"""`skillc replay FILE…`: judge recorded agent conversations with the contracts, in shadow mode."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from skillc.commands import CONFIG_HELP

HELP = "judge recorded agent conversations with your contracts (shadow mode: no tool is called)"
DESCRIPTION = """\
Read recorded conversations and judge every tool call in them the way the runtime would have,
through the runtime's own tool-call chain (catalog, argument policy, binding, parameter contract,
rules, fingerprint, write gate, idempotency). No tool is called: the answer recorded for each call
stands in for the tool's and is judged by the contract (success, error, extracts) to become
evidence, exactly as a live answer would. The user's recorded messages are the USER source;
--platform gives the caller's identity.

Input: OpenAI chat-completions messages (a JSON list of messages, an object with `messages`, or
JSONL with one conversation a line; --messages-key for conversations nested in a record, e.g.
`traj`), or skillc's own trace files (JSON lines, as `skillc chat --trace` writes them). Records
that cannot be read are reported and skipped. Each conversation is judged as one session with one
task; how a call finds its skill, how approvals and confirmations are read and why verdicts after
a refused call are "counterfactual": docs/replay.md.

Verdicts: allowed, refused (with the code and message the agent would have seen), approval asked
(with the user's recorded confirmation quoted beside it, if any), replayed (an idempotent repeat
of a write that already succeeded: nothing would have been sent).

examples:
  skillc replay logs.jsonl --studio examples/studio --agent billing --platform userId=7 --platform organId=9
  skillc replay traj.json --messages-key traj --format html -o report.html
  skillc replay logs.jsonl --compiled generated --format json -o replay.json --fail-on refused
  skillc replay logs.jsonl --labels labels.json      (labels: {"<conversation id>:<call index>": "correct"|"wrong"})
  skillc replay run.trace.jsonl --compiled generated (a skillc trace)

exit status:
  0  replayed (whatever the verdicts, unless --fail-on says otherwise)
  1  --fail-on refused: a call was refused; --fail-on any: a call was refused, held for approval,
     or a record was unreadable
  2  bad invocation, or a studio, file or labels file that cannot be read
"""
FORMATS = ("human", "json", "markdown", "html")


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `skillc replay`."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="recorded conversations (JSON, JSONL, skillc trace)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--studio", metavar="S", help="studio directory or SQLite file, compiled for the replay "
                       "(default: [studio] source of the config, else ./examples/studio)")
    where.add_argument("--compiled", metavar="DIR", help="an already compiled studio directory (no compiler needed)")
    parser.add_argument("--config", metavar="PATH", help=CONFIG_HELP + "; its [state] settings apply")
    parser.add_argument("--agent", metavar="A", help="the agent whose skills judge the calls "
                        "(default: per conversation, the agent whose skills hold most of its tools)")
    parser.add_argument("--skill", metavar="K", help="judge every call with this one skill")
    parser.add_argument("--platform", metavar="KEY=VALUE", action="append", default=[],
                        help="the caller's platform identity, e.g. userId=7 (numbers stay numbers); repeatable")
    parser.add_argument("--messages-key", metavar="KEY", help="where a record keeps its messages (dotted: a.b)")
    parser.add_argument("--format", choices=FORMATS, default="human", help="report format (default: human)")
    parser.add_argument("-o", "--output", metavar="PATH", help="write the report to PATH instead of stdout")
    parser.add_argument("--labels", metavar="FILE", help="your own judgement per call, to print the confusion table")
    parser.add_argument("--fail-on", choices=("refused", "any"), help="exit 1 when a call was refused (any: or "
                        "held for approval, or a record was unreadable): for CI")


def _error(message: str) -> int:
    print(f"skillc replay: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Replay args.files; the exit status (see DESCRIPTION)."""
    from skillc.chat import ChatError, parse_platform
    from skillc.replay.studio import StudioUnavailable, open_studio

    try:
        platform = parse_platform(args.platform)
    except ChatError as exc:
        return _error(str(exc))
    labels = _read_labels(args.labels) if args.labels else None
    if labels is False:
        return 2
    missing = [f for f in args.files if not _readable(f)]
    if missing:
        return _error(f"cannot read {', '.join(missing)}")
    try:
        with open_studio(args) as (studio, name, settings):
            return _replay(args, studio, name, settings, platform, labels)
    except StudioUnavailable as exc:
        return _error(str(exc))


def _readable(path: str) -> bool:
    import os

    return os.path.isfile(path) and os.access(path, os.R_OK)


def _read_labels(path: str) -> Any:
    from skillc.runtime.replay.labels import LabelsError, parse

    try:
        with open(path, encoding="utf-8") as fh:
            return parse(fh.read())
    except OSError as exc:
        _error(f"--labels {path}: {exc.strerror or exc}")
    except (LabelsError, UnicodeDecodeError) as exc:
        _error(f"--labels {path}: {exc}")
    return False


def _replay(args: argparse.Namespace, studio: Any, name: str, settings: Any, platform: dict[str, Any],
            labels: Any) -> int:
    from skillc.replay.progress import Bar
    from skillc.replay.write import write_report
    from skillc.runtime.replay import JudgeOptions, replay

    if args.agent and args.agent not in studio.agents:
        return _error(f"no agent {args.agent!r} in the studio (agents: {', '.join(sorted(studio.agents)) or 'none'})")
    if args.skill and args.skill not in studio.skills:
        return _error(f"no loadable skill {args.skill!r} in the studio")
    if not args.skill and not any(k in studio.skills for a in studio.agents.values() for k in a.skills):
        return _error("the studio has no agent with a loadable skill (pass --skill K to judge with one skill)")
    options = JudgeOptions(settings=settings, agent=args.agent, skill=args.skill, platform=platform)
    bar = Bar() if sys.stderr.isatty() else None
    try:
        report = replay(studio, list(args.files), options, studio_name=name, messages_key=args.messages_key,
                        on_progress=bar)
    finally:
        if bar is not None:
            bar.close()
    try:
        write_report(report, args.format, args.output, labels)
    except OSError as exc:
        return _error(f"--output {args.output}: {exc.strerror or exc}")
    return _status(report, args.fail_on)


def _status(report: Any, fail_on: str | None) -> int:
    from skillc.runtime.words.vocab import Verdict

    if fail_on is None:
        return 0
    stops = {Verdict.REFUSED} if fail_on == "refused" else {Verdict.REFUSED, Verdict.APPROVAL_ASKED}
    if any(c.verdict in stops for c in report.calls()):
        return 1
    return 1 if fail_on == "any" and report.unreadable else 0
