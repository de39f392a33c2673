"""The spec's vocabulary, spelled once: the enums of §18, the platform fields of §11, and the
runtime's own states. Members are `StrEnum`s, so they compare equal to the strings stored in
traces, the store and generated modules (`Source.USER == "USER"`); the compiler may import them.

Error names live in `errors.py` (`ErrorName`), with their codes.
"""
from __future__ import annotations

from enum import StrEnum


class Word(StrEnum):
    """A spec word: equal to, hashed, formatted and shown (`repr`) as its plain string, so records
    holding one print and serialise exactly as before."""

    def __repr__(self) -> str:
        return repr(self.value)


class Source(Word):
    """Where a value may come from (§5.3 sources, §8 output sources)."""

    USER = "USER"
    EVIDENCE = "EVIDENCE"
    NODE_OUTPUT = "NODE_OUTPUT"
    SHARED = "SHARED"
    SESSION = "SESSION"
    PRIOR_TASK = "PRIOR_TASK"
    MODEL = "MODEL"
    CONTRACT = "CONTRACT"
    PLATFORM = "PLATFORM"


class SideEffect(Word):
    """A tool's side effect (§4)."""

    NONE = "NONE"
    WRITE = "WRITE"


class Action(Word):
    """What a missing or untrusted argument leads to (§5.5); REJECT is the runtime's own verdict."""

    ASK_USER = "ASK_USER"
    CALL_TOOL = "CALL_TOOL"
    FAIL = "FAIL"
    REJECT = "REJECT"


class Op(Word):
    """success.op (§6.1), and skillc's MATCHES (a text pattern, runtime/compiled/textpattern.py)."""

    EQ = "EQ"
    NE = "NE"
    IN = "IN"
    NOT_IN = "NOT_IN"
    TRUTHY = "TRUTHY"
    EXISTS = "EXISTS"
    MATCHES = "MATCHES"


class Mode(Word):
    """A skill's mode (§3)."""

    REACT = "REACT"
    PLAN = "PLAN"


class When(Word):
    """from.when (§5.4)."""

    ALWAYS = "ALWAYS"
    UNIQUE = "UNIQUE"


class Share(Word):
    """outputs.share (§8)."""

    TASK = "TASK"
    SESSION = "SESSION"


class RuleStatus(Word):
    """A contract rule's verdict on one call (docs/reference/rules.md), a skillc extension."""

    HELD = "held"
    VIOLATED = "violated"
    UNDECIDABLE = "undecidable"
    SKIPPED = "not applicable"  # its `when` guard was false


class EvidenceStatus(Word):
    """An evidence record's status (§10.2, §14): a write is STARTED before its call."""

    STARTED = "STARTED"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"
    UNKNOWN = "UNKNOWN"
    UNKNOWN_PRE_CALL = "UNKNOWN_PRE_CALL"


class NodeStatus(Word):
    """A node's state (see lifecycle.py for the transitions)."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"
    WAITING = "WAITING"
    DONE = "DONE"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    SKIPPED = "SKIPPED"


class TaskStatus(Word):
    """A task's state."""

    RUNNING = "RUNNING"
    SUSPENDED = "SUSPENDED"
    DONE = "DONE"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


class Effect(Word):
    """What a call's result makes of its node beyond the observation (runtime/loop/node.py `after_call`)."""

    SUSPEND = "suspend"  # the user is asked (a follow-up, an approval): the node suspends
    FINISH = "finish"  # builtin_node_finish: the node is DONE
    FAIL = "fail"  # builtin_node_fail, a tripped fingerprint: the node FAILED
    DELEGATE = "delegate"  # a delegate node was made: this one waits for it
    UNCERTAIN = "uncertain"  # a write's outcome is unknown: verified before anything else (§14.3)


class Suspension(Word):
    """What a suspended node waits for from the user (§12, §14.1, §14.3)."""

    FOLLOW_UP = "FOLLOW_UP"
    APPROVAL = "APPROVAL"
    VERIFY = "VERIFY"


class Decision(Word):
    """The user's answer to an approval (§14.1): run the write, refuse it (the node is CANCELLED),
    or cancel the whole task."""

    CONFIRM = "CONFIRM"
    REJECT = "REJECT"
    CANCEL = "CANCEL"


class NodeKind(Word):
    """Why a node is in the task graph: planned, a provider (§7) or a delegate (§15)."""

    MAIN = "main"
    PROVIDER = "provider"
    DELEGATE = "delegate"


class PlatformField(Word):
    """The platform identity fields of §11 (reserved names: no output or scratch key may use one)."""

    USER_ID = "userId"
    MEMBER_ID = "memberId"
    NAME = "name"
    ORGAN_ID = "organId"
    ORGAN_NAME = "organName"
    ORGAN_TYPE = "organType"
    DEPT_PATH = "deptPath"


PLATFORM_FIELDS: frozenset[str] = frozenset(PlatformField)
"""The platform field names, for membership tests."""

OPEN_STATUSES: tuple[EvidenceStatus, ...] = (EvidenceStatus.STARTED, EvidenceStatus.UNKNOWN,
                                             EvidenceStatus.UNKNOWN_PRE_CALL)
"""A write whose outcome is not settled."""

FINAL_NODE: tuple[NodeStatus, ...] = (NodeStatus.DONE, NodeStatus.FAILED, NodeStatus.CANCELLED, NodeStatus.SKIPPED)
"""Node states that never change again."""

DECISIONS: tuple[Decision, ...] = tuple(Decision)
"""The decisions, for membership tests (a tuple: an answer's value may be any JSON value, hashable or not)."""

FINAL_TASK: tuple[TaskStatus, ...] = (TaskStatus.DONE, TaskStatus.FAILED, TaskStatus.CANCELLED)
"""Task states that never change again (every other task is open)."""


class Verdict(Word):
    """What replay (`skillc replay`) finds the contracts would have done with one recorded call."""

    ALLOWED = "allowed"
    REFUSED = "refused"
    APPROVAL_ASKED = "approval_asked"
    REPLAYED = "replayed"  # an idempotent repeat: the earlier result returned, nothing sent
    NOT_JUDGED = "not_judged"  # a skillc builtin in a recorded trace: not a business call


class Reading(Word):
    """How replay reads the user's message next to a write stopped for approval."""

    CONFIRMED = "confirmed"
    DECLINED = "declined"
    UNCLEAR = "unclear"


class ConfirmationPlace(Word):
    """Where replay found the user message it reads as the answer to an approval."""

    BEFORE = "before"  # the agent asked in its own words, the user answered, then it called
    AFTER = "after"  # the first user message after the call (what the runtime would wait for)


class Pairing(Word):
    """How replay found a recorded call's answer."""

    ID = "id"  # the tool message's tool_call_id names it (ids unique in the conversation)
    POSITION = "position"  # ids repeat: the n-th answer after the call batch is the n-th call's
    NONE = "none"  # no answer was recorded
    TRACE = "trace"  # a skillc trace: the call's event carries its own answer
