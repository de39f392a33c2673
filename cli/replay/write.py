"""Writing a replay's report in the chosen format, to a file or stdout."""
from __future__ import annotations

import sys
from typing import Any

from skillc.runtime.replay.report import Report


def text_of(report: Report, fmt: str, labels: Any, *, color: bool = False) -> str:
    """The report in `fmt` (human, json, markdown, html)."""
    confusion = None
    if labels is not None:
        from skillc.runtime.replay.labels import confusion as confusion_of

        confusion = confusion_of(report, labels)
    if fmt == "json":
        import json

        from skillc.runtime.replay.report import document

        return json.dumps(document(report, confusion), ensure_ascii=False, indent=2, default=str) + "\n"
    if fmt == "markdown":
        from skillc.replay.markdown import render as markdown

        return markdown(report, confusion)
    if fmt == "html":
        from skillc.replay.html import render as html

        return html(report, confusion)
    from skillc.replay.human import render as human

    return human(report, color=color, labels=confusion)


def write_report(report: Report, fmt: str, output: str | None, labels: Any) -> None:
    """Write the report to `output` (stdout when None); a file gets a one-line note on stderr."""
    if output is None:
        sys.stdout.write(text_of(report, fmt, labels, color=fmt == "human" and sys.stdout.isatty()))
        return
    text = text_of(report, fmt, labels)
    with open(output, "w", encoding="utf-8") as fh:
        fh.write(text)
    calls = len(report.calls())
    print(f"skillc replay: {calls} call(s) of {len(report.conversations)} conversation(s) judged; "
          f"report written to {output}", file=sys.stderr)
