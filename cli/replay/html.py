"""`skillc replay --format html`: the report as ONE self-contained HTML file to forward.

No script, no external host (a Content-Security-Policy says so to the browser): inline CSS, the
totals as an inline SVG chart, each conversation a `<details>` holding its calls. Every value
from the recording or the studio is escaped.
"""
from __future__ import annotations

import json
from html import escape
from typing import Any

from skillc.replay.chart import stacked_bars
from skillc.replay.confusion import HEADS as CONFUSION_HEADS
from skillc.replay.confusion import headlines
from skillc.replay.human import COLUMNS, HEADS, after_text, counterfactual_note
from skillc.runtime.replay.judge import CallVerdict, ConversationResult
from skillc.runtime.replay.report import Report, totals
from skillc.runtime.words.vocab import Verdict

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
BADGE = {Verdict.ALLOWED: ("allowed", "ok"), Verdict.REFUSED: ("refused", "no"),
         Verdict.APPROVAL_ASKED: ("approval asked", "ask"), Verdict.REPLAYED: ("replayed", "rep"),
         Verdict.NOT_JUDGED: ("not judged", "nj")}
ARGS_CHARS = 600

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2228;margin:0;background:#f6f7f9}
main{max-width:1180px;margin:0 auto;padding:24px 28px 60px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 10px}
.sub{color:#5b6570;margin:0 0 18px}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:10px 0 8px}
.card{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:10px 16px;min-width:110px}
.card b{display:block;font-size:22px}.card span{color:#5b6570;font-size:12px;text-transform:uppercase}
.card.no b{color:#b3362c}.card.ask b{color:#a8740a}.card.ok b{color:#2d7d49}.card.rep b{color:#2f6f94}
.panel{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:14px 16px;overflow-x:auto}
.chart .label,.chart .count,.chart .legend{font:12px system-ui,sans-serif;fill:#33393f}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border-bottom:1px solid #e6e9ed;padding:5px 8px;text-align:left;vertical-align:top}
th{font-size:12px;color:#5b6570;text-transform:uppercase;font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;border-radius:10px;padding:1px 8px;font-size:12px;font-weight:600;white-space:nowrap}
.badge.ok{background:#e1f3e7;color:#22693b}.badge.no{background:#fbe3e1;color:#9c2c23}
.badge.ask{background:#fcf0d4;color:#875c05}.badge.rep{background:#e0eef7;color:#255a78}
.badge.nj{background:#eceef1;color:#555}
.cf{color:#7b5ea7;font-size:12px;font-weight:600}
details{background:#fff;border:1px solid #dde1e6;border-radius:8px;margin:8px 0}
summary{cursor:pointer;padding:9px 14px;font-weight:600}
summary .meta{font-weight:400;color:#5b6570;margin-left:8px}
details>div{padding:0 14px 12px}
code{font:12px ui-monospace,Menlo,Consolas,monospace;background:#f1f3f5;border-radius:4px;padding:1px 4px;
 white-space:pre-wrap;word-break:break-all}
.note{color:#5b6570;font-size:13px;margin:6px 0}
.why{max-width:430px}
td.tool code{white-space:nowrap}
"""


def _counts_table(rows: list[tuple[str, dict[str, int]]], first: str) -> str:
    head = f"<tr><th>{escape(first)}</th>" + "".join(f'<th class="n">{h}</th>' for h in HEADS) + "</tr>"
    body = "".join(f"<tr><td>{escape(name)}</td>" + "".join(f'<td class="n">{row[c]}</td>' for c in COLUMNS)
                   + "</tr>" for name, row in rows)
    return f"<table>{head}{body}</table>"


def _why(c: CallVerdict) -> str:
    parts = []
    if c.error and c.verdict != Verdict.APPROVAL_ASKED:
        parts.append(f"<b>{escape(str(c.error))}</b> <code>{escape(str(c.code))}</code> {escape(c.message)}")
    elif c.verdict == Verdict.REPLAYED:
        parts.append(escape(c.message))
    if c.confirmation is not None:
        parts.append(f"user {escape(c.confirmation.where)}: \u201c{escape(c.confirmation.text)}\u201d "
                     f"(<b>{escape(str(c.confirmation.reading))}</b>)")
    elif c.verdict == Verdict.APPROVAL_ASKED:
        parts.append("no user message to read as a confirmation")
    if c.after_confirmation is not None:
        parts.append(f"confirmed run: {escape(after_text(c.after_confirmation))}")
    out = c.outcome
    if out is not None and out.get("business_ok") is False:
        parts.append(f"answer judged a business failure: {escape(str(out.get('code')))} "
                     f"{escape(str(out.get('message', '')))}")
    elif out is not None and out.get("error"):
        parts.append(f"{escape(str(out['error']))}: {escape(str(out.get('message', '')))}")
    if c.counterfactual:
        parts.append('<span class="cf">counterfactual</span>')
    return "<br>".join(parts)


def _args(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, str) else value
    return escape(text if len(text) <= ARGS_CHARS else text[:ARGS_CHARS] + "…")


def _conversation(conv: ConversationResult) -> str:
    stopped = sum(1 for c in conv.calls if c.verdict in (Verdict.REFUSED, Verdict.APPROVAL_ASKED))
    refused = sum(1 for c in conv.calls if c.verdict == Verdict.REFUSED)
    asked = sum(1 for c in conv.calls if c.verdict == Verdict.APPROVAL_ASKED)
    meta = f"{len(conv.calls)} call(s)" + (f", {refused} refused" if refused else "") + (
        f", {asked} approval asked" if asked else "")
    where = f"{conv.file}:{conv.line}" if conv.line else conv.file
    rows = []
    for c in conv.calls:
        label, cls = BADGE[c.verdict]
        rows.append(f'<tr><td class="n">{c.index}</td><td class="tool"><code>{escape(c.tool)}</code>'
                    f'{" <small>write</small>" if c.write else ""}</td>'
                    f'<td><span class="badge {cls}">{label}</span></td><td>{escape(c.skill or "")}</td>'
                    f'<td class="why">{_why(c)}</td><td><code>{_args(c.args)}</code></td></tr>')
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in conv.notes)
    if conv.counterfactual_from is not None and conv.counterfactual_from < len(conv.calls):
        notes += (f'<p class="note">Call {conv.counterfactual_from} was stopped: its recorded answer is not evidence, '
                  "so the verdicts after it are counterfactual.</p>")
    table = ("<table><tr><th class=\"n\">#</th><th>tool</th><th>verdict</th><th>skill</th><th>why</th>"
             f"<th>arguments</th></tr>{''.join(rows)}</table>") if rows else '<p class="note">no tool calls</p>'
    return (f"<details{' open' if stopped else ''}><summary>{escape(conv.id)}<span class=\"meta\">{escape(meta)} · "
            f"agent {escape(conv.agent or '?')} · {escape(where)}</span></summary><div>{notes}{table}</div></details>")


def _confusion(c: dict[str, Any]) -> str:
    rows = "".join(f"<tr><td>{label}</td>" + "".join(f'<td class="n">{c["table"][label][k]}</td>' for k, _ in
                                                      CONFUSION_HEADS) + "</tr>" for label in ("wrong", "correct"))
    said = "".join(f'<p class="note">{escape(line)}</p>' for line in headlines(c))
    return (f"<h2>Against your labels ({c['labelled']} labelled calls)</h2><div class=\"cards\">"
            f"<div class=\"card ok\"><b>{c['wrong_stopped']} / {c['wrong_calls']}</b><span>wrong calls stopped</span></div>"
            f"<div class=\"card ask\"><b>{c['wrong_held']}</b><span>wrong calls held for a yes</span></div>"
            f"<div class=\"card {'no' if c['correct_refused'] else 'ok'}\"><b>{c['correct_refused']} / "
            f"{c['correct_calls']}</b><span>correct calls refused</span></div></div><table><tr><th>label</th>"
            + "".join(f'<th class="n">{h}</th>' for _, h in CONFUSION_HEADS) + f"</tr>{rows}</table>{said}")


def render(report: Report, confusion: dict[str, Any] | None = None) -> str:
    """The whole report as one HTML document."""
    t = totals(report)
    cards = "".join(f'<div class="card {cls}"><b>{n}</b><span>{label}</span></div>' for n, label, cls in (
        (t["calls"], "tool calls", ""), (t["allowed"], "allowed", "ok"), (t["refused"], "refused", "no"),
        (t["approval_asked"], "approval asked", "ask"), (t["replayed"], "replayed", "rep"),
        (t["writes"]["calls"], "writes", "")))
    rows = [("all calls", t), ("writes", t["writes"])] + list(t["by_tool"].items())
    by_code = "".join(f'<tr><td class="n">{r["count"]}</td><td>{escape(r["name"])}</td><td><code>{escape(str(r["code"]))}'
                      "</code></td></tr>" for r in t["by_code"])
    who = ", ".join(f"{k}={v}" for k, v in report.platform.items())
    files = ", ".join(report.files) if len(report.files) <= 2 else f"{len(report.files)} files"
    sub = (f"{t['conversations']} conversation(s) from {files} · studio {report.studio}"
           + (f" · agent {report.agent}" if report.agent else "") + (f" · platform {who}" if who else ""))
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>skillc replay report</title>", f"<style>{STYLE}</style></head><body><main>",
        "<h1>skillc replay</h1>", f'<p class="sub">{escape(sub)}</p>', f'<div class="cards">{cards}</div>',
        "<h2>Verdicts by tool</h2>", f'<div class="panel">{stacked_bars(rows, "verdicts by tool")}</div>',
        "<h2>Totals</h2>", _counts_table(rows, "calls"),
    ]
    if by_code:
        parts += ["<h2>By code</h2>", f'<table><tr><th class="n">count</th><th>name</th><th>code</th></tr>{by_code}</table>']
    if confusion is not None:
        parts.append(_confusion(confusion))
    if t["counterfactual_conversations"]:
        parts.append(f'<p class="note">{escape(counterfactual_note(t["counterfactual_conversations"]))}</p>')
    parts.append(f"<h2>Conversations ({len(report.conversations)})</h2>")
    parts += [_conversation(conv) for conv in report.conversations]
    if report.unreadable:
        parts.append(f"<h2>Unreadable records, skipped ({len(report.unreadable)})</h2><ul>")
        parts += [f"<li><code>{escape(u.file)}{':' + str(u.line) if u.line else ''}</code> {escape(u.message)}</li>"
                  for u in report.unreadable]
        parts.append("</ul>")
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"
