"""The labels' confusion table as terminal lines and as Markdown."""
from __future__ import annotations

from typing import Any

HEADS = (("refused", "refused"), ("replayed", "replayed"), ("approval_unconfirmed", "held"),
         ("approval_confirmed", "after a yes"), ("allowed", "allowed"))


def headlines(c: dict[str, Any]) -> list[str]:
    """The numbers that matter, in words."""
    out = [f"wrong calls stopped: {c['wrong_stopped']} of {c['wrong_calls']} (refused, or an idempotent repeat "
           f"that sends nothing); {c['wrong_held']} more held for a confirmation the user did not give, "
           f"{c['wrong_after_yes']} let through only after the user's yes",
           f"correct calls refused: {c['correct_refused']} of {c['correct_calls']}"
           f" ({c['correct_held']} more held for a confirmation the user did not give)"]
    if c["unmatched"]:
        shown = ", ".join(c["unmatched"][:5]) + (" …" if len(c["unmatched"]) > 5 else "")
        out.append(f"{len(c['unmatched'])} label(s) name no replayed call: {shown}")
    return out


def lines(c: dict[str, Any], *, color: bool = False) -> list[str]:
    """The table and its headline numbers."""
    bold, reset = ("\033[1m", "\033[0m") if color else ("", "")
    out = [f"{bold}against your labels ({c['labelled']} labelled calls){reset}",
           "  " + "label".ljust(10) + "".join(h.rjust(13) for _, h in HEADS)]
    for label in ("wrong", "correct"):
        out.append("  " + label.ljust(10) + "".join(str(c["table"][label][k]).rjust(13) for k, _ in HEADS))
    return out + ["  " + line for line in headlines(c)]


def markdown(c: dict[str, Any]) -> list[str]:
    """The same as a Markdown table."""
    out = [f"## Against your labels ({c['labelled']} labelled calls)", "",
           "| label | " + " | ".join(h for _, h in HEADS) + " |", "|---|" + "---:|" * len(HEADS)]
    for label in ("wrong", "correct"):
        out.append(f"| {label} | " + " | ".join(str(c["table"][label][k]) for k, _ in HEADS) + " |")
    return out + [""] + [f"- {line}" for line in headlines(c)]
