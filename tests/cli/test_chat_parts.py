"""The conversation parts of `skillc chat` (skillc.chat_loop) over a stand-in session: the prompt
and the answers each waiting question takes (approval, verification, follow-up), the /commands the
pseudo-terminal tests do not type, a reply that answers nothing, the end of input, and a turn that
ends the chat. What the real session and store do is covered by tests/cli/test_chat_*.py."""
from __future__ import annotations

import asyncio
from typing import Any

import pytest

from skillc.chat_loop import HELP_TEXT, converse, greet, run_command, take_turn
from skillc.runtime.words.errors import SessionBusy
from skillc.runtime.store import StoreCorrupt

APPROVAL = {"kind": "APPROVAL", "question": "Create the article?"}
VERIFY = {"kind": "VERIFY", "question": "Was the article created?"}
FOLLOW_UP = {"kind": "FOLLOW_UP", "question": "Which space?"}


class FakeSession:
    """Waits for `pending` until a turn runs; records each turn as ("send", line) or ("answer", dict)."""

    def __init__(self, pending: dict[str, Any] | None = None, fail: BaseException | None = None) -> None:
        self.id = "s-1"
        self.waiting = pending
        self.fail = fail
        self.turns: list[tuple[str, Any]] = []

    def pending(self) -> dict[str, Any] | None:
        return self.waiting

    async def send(self, line: str) -> None:
        self.turns.append(("send", line))
        self._turn()

    async def answer(self, answer: dict[str, Any]) -> None:
        self.turns.append(("answer", answer))
        self._turn()

    def _turn(self) -> None:
        if self.fail is not None:
            raise self.fail
        self.waiting = None


def talk(session: FakeSession, lines: list[str], awaitable: bool = False) -> tuple[int, list[str], list[str]]:
    """Run converse over `lines` then the end of input: (status, what was written, the prompts)."""
    out: list[str] = []
    prompts: list[str] = []
    rest = iter(lines)

    def read(prompt: str) -> Any:
        prompts.append(prompt)
        try:
            line = next(rest)
        except StopIteration:
            raise EOFError from None
        if awaitable:
            async def give() -> str:
                return line
            return give()
        return line

    status = asyncio.run(converse(session, read, out.append))
    return status, out, prompts


@pytest.mark.parametrize(("word", "decision"), [
    ("y", "CONFIRM"), ("Yes", "CONFIRM"), ("confirm", "CONFIRM"), ("n", "REJECT"), ("NO", "REJECT"),
    ("reject", "REJECT"), ("c", "CANCEL"), ("cancel", "CANCEL")])
def test_an_approval_takes_each_of_its_words(word: str, decision: str) -> None:
    session = FakeSession(APPROVAL)
    status, out, prompts = talk(session, [f"  {word} "])
    assert session.turns == [("answer", {"decision": decision})]
    assert prompts == ["confirm? [y]es / [n]o, reject / [c]ancel> ", "you> "]
    assert (status, out) == (0, [""])


@pytest.mark.parametrize(("word", "verified"), [("y", True), ("yes", True), ("N", False), ("no", False)])
def test_a_verification_takes_yes_or_no(word: str, verified: bool) -> None:
    session = FakeSession(VERIFY)
    status, out, prompts = talk(session, [word])
    assert session.turns == [("answer", {"verified": verified})]
    assert prompts == ["did it take effect? [y/n]> ", "you> "]
    assert (status, out) == (0, [""])


def test_a_reply_that_answers_nothing_is_asked_again_without_a_turn() -> None:
    session = FakeSession(VERIFY)
    _, out, prompts = talk(session, ["c", "maybe"])
    assert session.turns == []
    assert out == ["please answer y, n", "please answer y, n", ""]  # a verification cannot be cancelled
    assert prompts == ["did it take effect? [y/n]> "] * 3
    session = FakeSession(APPROVAL)
    _, out, _ = talk(session, ["ok"])
    assert session.turns == [] and out == ["please answer y, n or c", ""]


def test_a_follow_up_is_answered_by_the_next_message() -> None:
    session = FakeSession(FOLLOW_UP)
    status, _, prompts = talk(session, ["y"], awaitable=True)
    assert session.turns == [("send", "y")]  # "y" is a message here, not a decision
    assert prompts == ["you> ", "you> "] and status == 0


def test_commands_the_terminal_tests_do_not_type() -> None:
    session = FakeSession()
    status, out, _ = talk(session, ["/help", "/nope", "", "/exit", "never read"])
    assert out == [HELP_TEXT, "unknown command /nope; /help lists them"]  # /exit writes nothing, EOF not reached
    assert session.turns == [] and status == 0


def test_a_slash_before_a_space_is_a_message() -> None:
    out: list[str] = []
    assert run_command("/tmp/a b", FakeSession(), None, out.append) is False
    assert run_command("/session", FakeSession(), None, out.append) is True
    assert out == ["s-1"]
    session = FakeSession()
    talk(session, ["/tmp/a b"])
    assert session.turns == [("send", "/tmp/a b")]


def test_the_greeting_says_new_or_resumed_and_what_waits() -> None:
    out: list[str] = []
    greet(FakeSession(), False, out.append)
    greet(FakeSession(APPROVAL), True, out.append)
    assert out == ["session s-1 (resume with: skillc chat --session s-1); /help for help",
                   "resumed s-1 (resume with: skillc chat --session s-1); /help for help",
                   "waiting: APPROVAL: Create the article?"]


def test_a_busy_turn_goes_on_and_a_corrupt_one_ends_the_chat() -> None:
    out: list[str] = []
    assert asyncio.run(take_turn(FakeSession(fail=SessionBusy("held")), "hi", None, out.append)) is True
    assert out[-1].startswith("busy (SESSION_BUSY): ")
    session = FakeSession(fail=StoreCorrupt("s-1", "task", "bad JSON"))
    status, out, _ = talk(session, ["hi", "never read"])
    assert status == 1
    assert out[-1].startswith("error: session s-1: stored task is unreadable (bad JSON). This session cannot go on")
    assert session.turns == [("send", "hi")]


def test_an_error_the_chat_does_not_explain_is_not_swallowed() -> None:
    with pytest.raises(RuntimeError, match="boom"):
        talk(FakeSession(fail=RuntimeError("boom")), ["hi"])
