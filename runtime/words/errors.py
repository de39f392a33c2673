"""The spec's error table (§17) and the runtime's own rejection names: the only place a code is spelled."""
from __future__ import annotations

from dataclasses import dataclass

from skillc.runtime.words.vocab import Word


class SkillcError(Exception):
    """The base of every error skillc raises to its caller (compiler, runtime, CLI): catch it to
    catch "anything skillc raised" in one clause."""


@dataclass(frozen=True)
class ErrorCode:
    """One row of the error table: the code seen by logs, the name seen by the model and traces."""

    name: str
    code: str | None
    meaning: str


class ErrorName(Word):
    """Every error name of the table below (the model and the trace see these)."""

    MCP_TOOL_ERROR = "MCP_TOOL_ERROR"
    TOOL_BUSINESS_FAILED = "TOOL_BUSINESS_FAILED"
    MCP_INVALID_PARAMS = "MCP_INVALID_PARAMS"
    MCP_RPC_ERROR = "MCP_RPC_ERROR"
    TOOL_TIMEOUT = "TOOL_TIMEOUT"
    TOOL_UNREACHABLE = "TOOL_UNREACHABLE"
    TOOL_IO_ERROR = "TOOL_IO_ERROR"
    TOOL_ERROR = "TOOL_ERROR"
    ARG_JSON_INVALID = "ARG_JSON_INVALID"
    ARG_REJECTED = "ARG_REJECTED"
    PARAM_PROVENANCE_FAIL = "PARAM_PROVENANCE_FAIL"
    PARAM_PROVENANCE_CALL_TOOL = "PARAM_PROVENANCE_CALL_TOOL"
    PARAM_PROVENANCE_ASK_USER = "PARAM_PROVENANCE_ASK_USER"
    PARAM_PROVENANCE_REJECTED = "PARAM_PROVENANCE_REJECTED"
    FINGERPRINT_TRIP = "FINGERPRINT_TRIP"
    CATALOG_DENIED = "CATALOG_DENIED"
    STATE_KEY_RESERVED = "STATE_KEY_RESERVED"
    WRITE_PENDING_VERIFY = "WRITE_PENDING_VERIFY"
    WRITE_IN_FLIGHT = "WRITE_IN_FLIGHT"
    APPROVAL_REQUIRED = "APPROVAL_REQUIRED"
    WRITE_CONTRACT_INCOMPLETE = "WRITE_CONTRACT_INCOMPLETE"
    SOURCE_REJECT = "SOURCE_REJECT"
    PLATFORM_FIELD_FORBIDDEN = "PLATFORM_FIELD_FORBIDDEN"
    OUTPUT_PATH_INVALID = "OUTPUT_PATH_INVALID"
    OUTPUT_WRITE_FORBIDDEN = "OUTPUT_WRITE_FORBIDDEN"
    APPROVAL_NOT_GATED = "APPROVAL_NOT_GATED"
    APPROVAL_TOOL_MISMATCH = "APPROVAL_TOOL_MISMATCH"
    FOLLOW_UP_ANSWERED = "FOLLOW_UP_ANSWERED"
    FOLLOW_UP_UNGROUNDED = "FOLLOW_UP_UNGROUNDED"
    EVIDENCE_PATH_INVALID = "EVIDENCE_PATH_INVALID"
    SKILL_NOT_FOUND = "SKILL_NOT_FOUND"
    DELEGATE_FORBIDDEN = "DELEGATE_FORBIDDEN"
    DELEGATE_REPEATED = "DELEGATE_REPEATED"
    PROVIDER_UNAVAILABLE = "PROVIDER_UNAVAILABLE"
    FINISH_MISSING_OUTPUT = "FINISH_MISSING_OUTPUT"
    FINISH_OPEN_EVIDENCE = "FINISH_OPEN_EVIDENCE"
    FINISH_OUTPUT_MISSING = "FINISH_OUTPUT_MISSING"
    FINISH_OUTPUT_SOURCE = "FINISH_OUTPUT_SOURCE"
    FINISH_NEED_TARGET = "FINISH_NEED_TARGET"
    FINISH_NEED_BUSINESS = "FINISH_NEED_BUSINESS"
    RULE_VIOLATED = "RULE_VIOLATED"
    RULE_UNDECIDABLE = "RULE_UNDECIDABLE"


_ROWS: tuple[tuple[str, str | None, str], ...] = (
    ("MCP_TOOL_ERROR", "agent_runtime.40003", "MCP tool returned an error"),
    ("TOOL_BUSINESS_FAILED", "agent_runtime.40004", "business failure (no error.code configured)"),
    ("MCP_INVALID_PARAMS", "agent_runtime.40014", "MCP invalid parameters"),
    ("MCP_RPC_ERROR", "agent_runtime.40015", "MCP RPC error"),
    ("TOOL_TIMEOUT", "agent_runtime.40016", "tool timed out"),
    ("TOOL_UNREACHABLE", "agent_runtime.40017", "tool unreachable"),
    ("TOOL_IO_ERROR", "agent_runtime.40018", "tool I/O error"),
    ("TOOL_ERROR", "agent_runtime.40029", "unknown tool error"),
    ("ARG_JSON_INVALID", "agent_runtime.40020", "arguments are not valid JSON"),
    ("ARG_REJECTED", "agent_runtime.40032", "arguments are not an object, or lack a schema-required field"),
    ("PARAM_PROVENANCE_FAIL", "agent_runtime.40022", "a required argument is missing and configured to fail"),
    ("PARAM_PROVENANCE_CALL_TOOL", "agent_runtime.40023", "another tool must be called first to obtain the value"),
    ("PARAM_PROVENANCE_ASK_USER", "agent_runtime.40024", "the user must be asked"),
    ("PARAM_PROVENANCE_REJECTED", "agent_runtime.40025", "the argument's source is not trusted"),
    ("FINGERPRINT_TRIP", "agent_runtime.40026", "repeated identical call: circuit breaker tripped"),
    ("CATALOG_DENIED", "agent_runtime.40027", "tool not callable from this node"),
    ("STATE_KEY_RESERVED", "agent_runtime.40028", "reserved scratch-pad key"),
    ("WRITE_PENDING_VERIFY", "agent_runtime.40030", "write outcome awaits verification"),
    ("WRITE_IN_FLIGHT", "agent_runtime.40031", "write in flight"),
    ("APPROVAL_REQUIRED", "agent_runtime.42221", "the write needs the user's confirmation first"),
    ("WRITE_CONTRACT_INCOMPLETE", "agent_runtime.42206", "the approved tool is not a write tool of this contract"),
    ("SOURCE_REJECT", "agent_runtime.42223", "output source check failed"),
    ("PLATFORM_FIELD_FORBIDDEN", "agent_runtime.42236", "a reserved platform field name was used"),
    ("OUTPUT_PATH_INVALID", "agent_runtime.42243", "output key is empty"),
    ("OUTPUT_WRITE_FORBIDDEN", "agent_runtime.42244", "output key not declared"),
    ("APPROVAL_NOT_GATED", "agent_runtime.42245", "no write call was stopped by the gate before asking for approval"),
    ("APPROVAL_TOOL_MISMATCH", "agent_runtime.42246", "approval names another tool than the one stopped"),
    ("FOLLOW_UP_ANSWERED", "agent_runtime.42247", "the question just answered was asked again"),
    ("FOLLOW_UP_UNGROUNDED", "agent_runtime.42248", "the follow-up question has no grounds"),
    ("EVIDENCE_PATH_INVALID", "agent_runtime.42235", "evidence id is empty"),
    ("SKILL_NOT_FOUND", "agent_runtime.40411", "the delegated skill does not exist"),
    ("DELEGATE_FORBIDDEN", "agent_runtime.42237", "delegation forbidden"),
    ("DELEGATE_REPEATED", "agent_runtime.42239", "repeated delegation"),
    ("PROVIDER_UNAVAILABLE", "agent_runtime.42212", "inputs.provider unavailable (planning failed)"),
    # Completion checks (§10.2) and runtime-level refusals: the spec names them, gives no code.
    ("FINISH_MISSING_OUTPUT", None, "finish needs a non-empty output"),
    ("FINISH_OPEN_EVIDENCE", None, "a write is not settled yet"),
    ("FINISH_OUTPUT_MISSING", None, "a required output is not written"),
    ("FINISH_OUTPUT_SOURCE", None, "a required output's source is not allowed"),
    ("FINISH_NEED_TARGET", None, "the node's target write has not completed"),
    ("FINISH_NEED_BUSINESS", None, "no business call has completed"),
    # skillc extensions beyond the spec: a tool contract's `rules` (docs/reference/rules.md).
    ("RULE_VIOLATED", "skillc.40901", "a rule of the tool contract is false for this call"),
    ("RULE_UNDECIDABLE", "skillc.40902", "a rule of the tool contract cannot be decided (a record or field is missing)"),
)

ERRORS: dict[str, ErrorCode] = {name: ErrorCode(name, code, meaning) for name, code, meaning in _ROWS}
assert set(ERRORS) == set(ErrorName), "ErrorName and the table must list the same names"


def code_of(name: str | None) -> str | None:
    """The spec's code for an error name (None for no name, and for names the spec gives no
    code). A name outside the table raises KeyError: a typo must not pass as "no code"."""
    if name is None:
        return None
    return ERRORS[name].code


def error(name: str) -> ErrorCode:
    """The row for `name`; a KeyError for a name that is not in the table is a programming error."""
    return ERRORS[name]


class CallerError(SkillcError):
    """An error for the caller of the session API (CLI, HTTP service), never an observation the
    model sees and not a §17 tool code. `name` is what logs and the service show."""

    name = "CALLER_ERROR"


class SessionBusy(CallerError):
    """SESSION_BUSY (docs/interpretations.md: One turn at a time): another turn or decision of
    this session holds its lease (HTTP 409 in the service). Nothing was done; try again when that
    turn has ended."""

    name = "SESSION_BUSY"


class UnknownAgent(CallerError, LookupError):
    """UNKNOWN_AGENT: the agent a caller picked (`Session.send(agent=…)`) is not in the studio or
    has no loadable skill. Nothing was done; the message names the loadable agents."""

    name = "UNKNOWN_AGENT"


class SessionUnavailable(CallerError):
    """STORE_UNAVAILABLE: the turn's changes could not be committed (disk full, database gone);
    nothing of the turn was kept and the session was reloaded as stored. Try again later."""

    name = "STORE_UNAVAILABLE"
