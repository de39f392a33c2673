"""Reading a scenario file and checking its shape before anything runs (docs/reference/scenarios.md).

Every problem is a `ScenarioError` whose message names the file, the line where YAML puts the
offending value, where it is in the scenario (`turn 2: answer`) and what was expected, so a
person can fix the file without reading a traceback. Runtime-level checks (the inline studio, the
`config:` settings, canned `tools:`, `servers:`) happen in the runner, with the same format.
"""
from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

import yaml

from skillc.runtime.words.errors import SkillcError

SCENARIO_KEYS = ("name", "config", "platform", "studio", "tools", "servers", "turns", "final")
TURN_KEYS = ("user", "answer", "at", "restart", "model", "expect", "absent")
FINAL_KEYS = ("invocations",)
OPERATORS = ("$contains", "$not_contains", "$prefix", "$in", "$absent")
ANSWER_KEYS = {"decision": ("CONFIRM", "REJECT", "CANCEL"), "verified": (True, False)}

Path_ = tuple[Any, ...]  # a place in the document: ("turns", 1, "answer")


class ScenarioError(SkillcError):
    """The scenario file is unreadable or malformed; the message is one readable line."""


class Located:
    """The parsed scenario plus its YAML node tree, to point at lines."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        try:
            self.data = yaml.safe_load(text)
            self.root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else path
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ScenarioError(f"{where}: invalid YAML: {problem}") from None

    def line(self, place: Path_) -> int | None:
        """The 1-based line of the value at `place` (or of its nearest ancestor)."""
        node, line = self.root, None
        for part in place:
            if node is None:
                break
            line = node.start_mark.line + 1
            if isinstance(node, yaml.MappingNode):
                node = next((v for k, v in node.value if k.value == part), None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
            else:
                node = None
        if node is not None:
            line = node.start_mark.line + 1
        return line

    def fail(self, place: Path_, message: str) -> ScenarioError:
        """An error at `place`: `file:line: where: message`."""
        line = self.line(place)
        head = f"{self.path}:{line}" if line else self.path
        where = _describe(place)
        return ScenarioError(f"{head}: {where}: {message}" if where else f"{head}: {message}")


def _describe(place: Path_) -> str:
    """("turns", 1, "expect", 0) -> "turn 2: expect[0]" (turns are 1-based, as in reports)."""
    out: list[str] = []
    rest = list(place)
    if len(rest) >= 2 and rest[0] == "turns" and isinstance(rest[1], int):
        out.append(f"turn {rest[1] + 1}")
        rest = rest[2:]
    text = ""
    for part in rest:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    if text:
        out.append(text)
    return ": ".join(out)


def _unknown(keys: Any, allowed: tuple[str, ...]) -> str | None:
    """A message for the first key not in `allowed`, with a did-you-mean."""
    for key in keys:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (expected one of {', '.join(allowed)})"
            return f"unknown key {key!r}{hint}"
    return None


def check_expectation(doc: Located, place: Path_, value: Any) -> None:
    """Operators in an expectation must be known, with a well-formed argument."""
    if isinstance(value, dict):
        if len(value) == 1:
            ((key, arg),) = value.items()
            if isinstance(key, str) and key.startswith("$"):
                if key not in OPERATORS:
                    raise doc.fail(place, f"unknown operator {key!r} (expected one of {', '.join(OPERATORS)})")
                if key == "$in":
                    if not isinstance(arg, list):
                        raise doc.fail(place, "$in takes a list of expectations")
                    for i, option in enumerate(arg):
                        check_expectation(doc, (*place, key, i), option)
                elif key == "$absent" and not isinstance(arg, bool):
                    raise doc.fail(place, "$absent takes true or false")
                elif key in ("$contains", "$not_contains", "$prefix") and not isinstance(arg, (str, int, float)):
                    raise doc.fail(place, f"{key} takes a string")
                return
        for key, item in value.items():
            if isinstance(key, str) and key.startswith("$"):
                raise doc.fail((*place, key), f"operator {key!r} must be the only key of its mapping")
            check_expectation(doc, (*place, key), item)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_expectation(doc, (*place, i), item)


def _check_turn(doc: Located, index: int, turn: Any) -> None:
    from skillc.runtime.outside.config import parse_duration
    from skillc.runtime.model.scripted import check_entry

    place: Path_ = ("turns", index)
    if not isinstance(turn, dict):
        raise doc.fail(place, "a turn is a mapping with user: or answer:")
    problem = _unknown(turn, TURN_KEYS)
    if problem:
        raise doc.fail(place, problem)
    if ("user" in turn) == ("answer" in turn):
        raise doc.fail(place, "needs exactly one of user: (a message) or answer: (an approval or verify answer)")
    if "user" in turn and not isinstance(turn["user"], (str, int, float)):
        raise doc.fail((*place, "user"), "user: is the message text")
    if "answer" in turn:
        answer = turn["answer"]
        if not isinstance(answer, dict) or len(answer) != 1 or next(iter(answer)) not in ANSWER_KEYS:
            raise doc.fail((*place, "answer"), "answer: is {decision: CONFIRM|REJECT|CANCEL} or {verified: true|false}")
        ((key, value),) = answer.items()
        if value not in ANSWER_KEYS[key] or (key == "verified" and not isinstance(value, bool)):
            raise doc.fail((*place, "answer"), f"{key}: must be one of {', '.join(map(str, ANSWER_KEYS[key]))}, got {value!r}")
    if turn.get("at") is not None:
        try:
            duration(turn["at"], parse_duration)
        except ValueError as exc:
            raise doc.fail((*place, "at"), f"{exc}; a turn moves the clock forward by +25h, +90m, +2d, 30s…") from None
    if "restart" in turn and not isinstance(turn["restart"], bool):
        raise doc.fail((*place, "restart"), "restart: is true or false")
    model = turn.get("model")
    if model is not None:
        if not isinstance(model, list):
            raise doc.fail((*place, "model"), "model: is a list of script entries (route, intent, plan, call, calls, text)")
        for i, entry in enumerate(model):
            problem = check_entry(entry)
            if problem:
                raise doc.fail((*place, "model", i), problem)
    for key in ("expect", "absent"):
        items = turn.get(key)
        if items is None:
            continue
        if not isinstance(items, list) or not all(isinstance(e, dict) for e in items):
            raise doc.fail((*place, key), f"{key}: is a list of event mappings such as {{type: tool.call, tool: …}}")
        for i, item in enumerate(items):
            check_expectation(doc, (*place, key, i), item)


def duration(value: Any, parse: Any = None) -> float:
    """Seconds of an `at:` value: `+25h`, `+90m`, `+2d`, `30s` or a number of seconds."""
    if parse is None:
        from skillc.runtime.outside.config import parse_duration as parse
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.startswith("+"):
        text = text[1:]
    return float(parse(text))


def load_scenario(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and shape-check a scenario file; raises ScenarioError naming the file, line and problem."""
    return read_scenario(path)[0]


def read_scenario(path: str | os.PathLike[str]) -> tuple[dict[str, Any], Located]:
    """`load_scenario`, plus a `Located` to point later errors (studio, tools) at lines."""
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{name}: is a directory, not a scenario file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{name}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    doc = Located(name, text)
    data = doc.data
    if not isinstance(data, dict):
        raise ScenarioError(f"{name}: a scenario is a mapping with name:, studio: and turns:")
    problem = _unknown(data, SCENARIO_KEYS)
    if problem:
        raise doc.fail((next(k for k in data if k not in SCENARIO_KEYS),), problem)
    for key in ("name", "studio", "turns"):
        if key not in data:
            raise ScenarioError(f"{name}: missing required key {key!r}")
    if not isinstance(data["name"], str) or not data["name"].strip():
        raise doc.fail(("name",), "name: must be a non-empty string")
    studio = data["studio"]
    if isinstance(studio, str):
        # A studio directory or SQLite file, relative to the scenario file's folder.
        folder = Path(name).resolve().parent / studio
        if not folder.exists():
            raise doc.fail(("studio",), f"{studio} does not exist (looked for {folder})")
    elif not isinstance(studio, dict):
        raise doc.fail(("studio",), "studio: is a mapping with agents: and skills:, or the path of a studio "
                       "directory (relative to this file)")
    for key in ("config", "platform", "servers"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise doc.fail((key,), f"{key}: must be a mapping")
    if data.get("tools") is not None and not isinstance(data["tools"], list):
        raise doc.fail(("tools",), "tools: is a list of {name, input_schema, responses}")
    for server, spec in (data.get("servers") or {}).items():
        if not isinstance(spec, dict):
            raise doc.fail(("servers", server), "a server is a mapping with command/args/env (stdio) or url")
    if not isinstance(data["turns"], list) or not data["turns"]:
        raise doc.fail(("turns",), "turns: is a non-empty list of turns")
    for i, turn in enumerate(data["turns"]):
        _check_turn(doc, i, turn)
    final = data.get("final")
    if final is not None:
        if not isinstance(final, dict):
            raise doc.fail(("final",), "final: is a mapping such as {invocations: {tool: count}}")
        problem = _unknown(final, FINAL_KEYS)
        if problem:
            raise doc.fail(("final",), problem)
        inv = final.get("invocations")
        if inv is not None and (not isinstance(inv, dict) or not all(
                isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in inv.values())):
            raise doc.fail(("final", "invocations"), "invocations: maps tool names to counts (integers >= 0)")
    return data, doc
