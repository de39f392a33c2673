"""The conversation of `skillc chat` once its session is open: the greeting, then prompt, read and
handle each line (a /command, an answer to what the session waits for, or a message) until /quit,
the end of input, or a turn the session cannot go on from.

Setting up and closing the chat (config, model, studio, store, MCP servers) is skillc.chat's. The
runtime's error classes are imported inside the functions that catch them, as in skillc.chat, so
importing this module does not import the runtime.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Callable

HELP_TEXT = """\
Type a message for your agents. While a write waits for approval, answer y (confirm),
n (reject: nothing is written) or c (cancel the task); while a write's outcome is unknown,
answer y or n (did it take effect?). Commands: /session (the id to resume with), /pending,
/help, /quit."""


def greet(session: Any, resumed: bool, write: Callable[[str], None], resume: str | None = None) -> None:
    """Say which session this is and how to resume it (`resume`: the whole command, with the
    options this chat was started with), and what it already waits for, if anything."""
    verb = "resumed" if resumed else "session"
    write(f"{verb} {session.id} (resume with: {resume or f'skillc chat --session {session.id}'}); /help for help")
    pending = session.pending()
    if pending:
        write(f"waiting: {pending['kind']}: {pending['question']}")


async def converse(session: Any, read: Callable[[str], Any], write: Callable[[str], None]) -> int:
    """Prompt, read and handle lines until /quit or the end of input (0), or until a turn leaves a
    session that cannot go on (1). `read(prompt)` returns the line, or an awaitable of it, and
    raises EOFError at the end of input."""
    while True:
        pending = session.pending()
        try:
            got = read(_prompt(pending))
            line = (await got if asyncio.iscoroutine(got) else got).strip()
        except EOFError:
            write("")
            return 0
        if not line:
            continue
        if line in ("/quit", "/exit"):
            return 0
        if run_command(line, session, pending, write):
            continue
        answer = _decision(pending, line)
        if pending and pending["kind"] in ("APPROVAL", "VERIFY") and answer is None:
            write("please answer y, n" + (" or c" if pending["kind"] == "APPROVAL" else ""))
            continue
        if not await take_turn(session, line, answer, write):
            return 1


def run_command(line: str, session: Any, pending: dict[str, Any] | None, write: Callable[[str], None]) -> bool:
    """Show what a /command asks for (/help, /session, /pending, or that it is unknown); False when
    `line` is not a command (a message or an answer, which may contain a slash after a space)."""
    if line == "/help":
        write(HELP_TEXT)
    elif line == "/session":
        write(session.id)
    elif line == "/pending":
        write(json.dumps(pending, ensure_ascii=False) if pending else "nothing is waiting")
    elif line.startswith("/") and " " not in line:
        write(f"unknown command {line}; /help lists them")
    else:
        return False
    return True


async def take_turn(session: Any, line: str, answer: dict[str, Any] | None, write: Callable[[str], None]) -> bool:
    """Run one turn: the answer to what the session waits for, or else `line` as a message. A turn
    the store refused is said in one line (turn_trouble); False when the chat must end there."""
    from skillc.runtime.words.errors import SessionBusy, SessionUnavailable
    from skillc.runtime.store import StoreError

    try:
        if answer is not None:
            await session.answer(answer)
        else:
            await session.send(line)
    except (SessionBusy, SessionUnavailable, StoreError) as exc:
        text, fatal = turn_trouble(exc, session.id)
        write(text)
        return not fatal
    return True


def turn_trouble(exc: BaseException, session_id: str) -> tuple[str, bool]:
    """The one line chat shows when a turn could not run or could not be stored, and whether the
    chat must end (a corrupt session cannot go on; busy or unavailable: the person retries)."""
    from skillc.runtime.words.errors import SessionBusy, SessionUnavailable
    from skillc.runtime.store import StoreCorrupt

    if isinstance(exc, SessionBusy):
        return (f"busy ({SessionBusy.name}): another process or chat is running a turn of session {session_id} "
                "right now; your message was not handled. Send it again once that turn has ended.", False)
    if isinstance(exc, StoreCorrupt):
        return (f"error: {exc}. This session cannot go on (other sessions are unaffected): start a new one "
                f"with `skillc chat`, or once the store is repaired resume with: skillc chat --session {session_id}",
                True)
    cause = exc.__cause__ if isinstance(exc, SessionUnavailable) and exc.__cause__ is not None else exc
    code = SessionUnavailable.name if isinstance(exc, SessionUnavailable) else "store error"
    return (f"error ({code}): the turn could not be stored ({cause}); nothing of it was kept and the session "
            "is as last saved. Fix the cause (disk space, the database), then send your message again.", False)


def _prompt(pending: dict[str, Any] | None) -> str:
    """The prompt for what the session waits for: a message (or follow-up answer), an approval, a verification."""
    if pending is None or pending["kind"] == "FOLLOW_UP":
        return "you> "
    if pending["kind"] == "APPROVAL":
        return "confirm? [y]es / [n]o, reject / [c]ancel> "
    return "did it take effect? [y/n]> "


def _decision(pending: dict[str, Any] | None, line: str) -> dict[str, Any] | None:
    """The answer `line` gives to a waiting approval or verification; None for a message (nothing
    waits, or a follow-up, which is answered by the next message) or a word that answers neither."""
    if pending is None or pending["kind"] == "FOLLOW_UP":
        return None
    word = line.lower()
    if pending["kind"] == "APPROVAL":
        table = {"y": "CONFIRM", "yes": "CONFIRM", "confirm": "CONFIRM", "n": "REJECT", "no": "REJECT",
                 "reject": "REJECT", "c": "CANCEL", "cancel": "CANCEL"}
        return {"decision": table[word]} if word in table else None
    table2 = {"y": True, "yes": True, "n": False, "no": False}
    return {"verified": table2[word]} if word in table2 else None
