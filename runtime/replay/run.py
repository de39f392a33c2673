"""A replay: read every file, judge every conversation, gather the report.

Files are read as streams (a JSONL file one record at a time), conversations are judged one
after another in one event loop, and `on_progress` hears after each one how far the reading is.
"""
from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator

from skillc.runtime.replay.judge import JudgeOptions, judge
from skillc.runtime.replay import openai_format, trace_format
from skillc.runtime.replay.recorded import Conversation, Unreadable
from skillc.runtime.replay.report import Report

Progress = Callable[[int, int, int], None]  # bytes read, bytes in all, calls judged


def read_any(path: str, messages_key: str | None = None) -> Iterator[Conversation | Unreadable]:
    """The conversations of one file, in whichever recorded format it holds: a skillc trace
    when its first line is a trace event, else OpenAI chat messages. A file that cannot be
    opened is one Unreadable record."""
    try:
        fh = open(path, "rb")
    except OSError as exc:
        yield Unreadable(path, 0, f"cannot open: {exc.strerror or exc}")
        return
    with fh:
        first = fh.readline()
        if messages_key is None and trace_format.is_trace_line(first):
            yield from trace_format.read(path, fh, first)
        else:
            yield from openai_format.read(path, fh, first, messages_key)


async def replay_async(studio: object, files: list[str], options: JudgeOptions, *, studio_name: str = "",
                       messages_key: str | None = None, on_progress: Progress | None = None) -> Report:
    """Judge every conversation of `files` (see `replay`)."""
    report = Report(studio=studio_name, files=list(files), platform=dict(options.platform), agent=options.agent,
                    skill=options.skill)
    sizes = [_size(f) for f in files]
    total, done_before, calls = sum(sizes), 0, 0
    seen: set[str] = set()
    for path, size in zip(files, sizes):
        for item in read_any(path, messages_key):
            if isinstance(item, Unreadable):
                report.unreadable.append(item)
                continue
            if item.id in seen:  # ids must name one conversation each (labels refer to them)
                base, n = item.id, 2
                while f"{base}~{n}" in seen:
                    n += 1
                item.notes.append(f"the id {base!r} was already used: this conversation is {base}~{n}")
                item.id = f"{base}~{n}"
            seen.add(item.id)
            result = await judge(studio, item, options)
            report.conversations.append(result)
            calls += len(result.calls)
            if on_progress is not None:
                on_progress(done_before + (item.end or size), total, calls)
        done_before += size
    return report


def replay(studio: object, files: list[str], options: JudgeOptions, *, studio_name: str = "",
           messages_key: str | None = None, on_progress: Progress | None = None) -> Report:
    """Judge every recorded tool call of `files` with the compiled `studio`'s contracts."""
    box: list[Report] = []

    async def main() -> None:
        # The report is handed out through `box`, not as the task's result: Python 3.11's
        # asyncio.run formats the finished main task (result included) while restoring its
        # SIGINT handler, which cost seconds for a report of 20,000 calls.
        box.append(await replay_async(studio, files, options, studio_name=studio_name, messages_key=messages_key,
                                      on_progress=on_progress))

    asyncio.run(main())
    return box[0]


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
