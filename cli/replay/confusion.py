"""The labels' confusion table as terminal lines and as Markdown."""
from __future__ import annotations

from typing import Any

HEADS = (("refused", "refused"), ("approval_asked", "approval asked"), ("allowed", "allowed"))


def lines(c: dict[str, Any], *, color: bool = False) -> list[str]:
    """The table and its two headline numbers."""
    bold, reset = ("\033[1m", "\033[0m") if color else ("", "")
    out = [f"{bold}against your labels ({c['labelled']} labelled calls){reset}",
           "  " + "label".ljust(10) + "".join(h.rjust(16) for _, h in HEADS)]
    for label in ("wrong", "correct"):
        out.append("  " + label.ljust(10) + "".join(str(c["table"][label][k]).rjust(16) for k, _ in HEADS))
    out.append(f"  wrong calls stopped: {c['wrong_stopped']} of {c['wrong_calls']} "
               f"({c['wrong_refused']} refused, {c['wrong_stopped'] - c['wrong_refused']} held for approval)")
    out.append(f"  correct calls refused: {c['correct_refused']} of {c['correct_calls']} "
               f"({c['correct_asked']} more held for approval)")
    if c["unmatched"]:
        shown = ", ".join(c["unmatched"][:5]) + (" …" if len(c["unmatched"]) > 5 else "")
        out.append(f"  {len(c['unmatched'])} label(s) name no replayed call: {shown}")
    return out


def markdown(c: dict[str, Any]) -> list[str]:
    """The same as a Markdown table."""
    out = [f"## Against your labels ({c['labelled']} labelled calls)", "",
           "| label | " + " | ".join(h for _, h in HEADS) + " |", "|---|" + "---:|" * len(HEADS)]
    for label in ("wrong", "correct"):
        out.append(f"| {label} | " + " | ".join(str(c["table"][label][k]) for k, _ in HEADS) + " |")
    out += ["", f"- wrong calls stopped: **{c['wrong_stopped']} of {c['wrong_calls']}**",
            f"- correct calls refused: **{c['correct_refused']} of {c['correct_calls']}**"]
    if c["unmatched"]:
        out.append(f"- {len(c['unmatched'])} label(s) name no replayed call")
    return out
