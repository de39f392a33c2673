"""README.md read as a test reads it: its sections, the files it shows and the commands it runs.

Tests that follow the README parse it each time, so they follow the README as it is, not a copy.
"""
from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def section(title: str) -> str:
    """The text of the `## <title>` section, up to the next `## ` heading."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}")
    end = text.find("\n## ", start + 5)
    return text[start:end if end != -1 else len(text)]


def blocks(text: str, *languages: str) -> list[str]:
    """The bodies of the fenced blocks of these languages, in order."""
    found = re.findall(r"^```([a-z]*)\n(.*?)^```", text, re.M | re.S)
    return [body for lang, body in found if lang in languages]


def files(text: str) -> dict[str, str]:
    """`` `path`: `` followed by a fenced block -> {path: the block's text}."""
    return dict(re.findall(r"^`([^`\s]+)`:\n\n```[a-z]*\n(.*?)^```", text, re.M | re.S))


def commands(block: str) -> list[str]:
    """A shell block as the commands a user types one by one: continued lines (`\\`) joined, a
    here-document kept whole with its command; blank lines and comments dropped."""
    out: list[str] = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        here = re.search(r"<<-?'?(\w+)'?", line)
        if here:
            end = here.group(1)
            body = [line]
            while i < len(lines) and lines[i] != end:
                body.append(lines[i])
                i += 1
            body.append(end)
            i += 1
            out.append("\n".join(body))
            continue
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + " " + lines[i].strip()
            i += 1
        out.append(line)
    return out


def spans(text: str) -> list[str]:
    """The inline code spans of a text (`like this`), in order."""
    return re.findall(r"`([^`\n]+)`", text)
