"""The service's own error answers (docs/API.md §6): one table of HTTP codes, one exception.

These are errors to the HTTP caller, not the spec's tool codes (§17): a refused tool call is part
of a run and travels in its events. Where the runtime's error table names a caller error (the
session lease's `SESSION_BUSY`), its name is taken from `skillc.runtime.words.errors`.
"""
from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

from skillc.runtime.words.errors import SessionBusy, SkillcError, UnknownAgent
from skillc.runtime.model.base import ModelError

# code -> HTTP status. The only place these names are spelled.
STATUS: dict[str, int] = {
    "AUTH_MISSING": 401, "AUTH_EXPIRED": 401, "AUTH_BAD_SIGNATURE": 401, "AUTH_REPLAYED": 401,
    "AUTH_BAD_IDENTITY": 401,
    "SESSION_FORBIDDEN": 403, "DEV_ORIGIN_REFUSED": 403,
    "SESSION_NOT_FOUND": 404, "RUN_NOT_FOUND": 404, "METRICS_DISABLED": 404, "NOT_FOUND": 404,
    "METHOD_NOT_ALLOWED": 405,
    SessionBusy.name: 409, "SESSION_EXISTS": 409, "RUN_ID_CONFLICT": 409, "INTERRUPT_STALE": 409,
    "APPROVAL_DIGEST_MISMATCH": 409,
    "BODY_TOO_LARGE": 413, "UNSUPPORTED_MEDIA_TYPE": 415, "DEV_HOST_REFUSED": 421,
    "INVALID_INPUT": 422, "NO_INPUT": 422, "RESUME_INVALID": 422, UnknownAgent.name: 422,
    "SHUTTING_DOWN": 503, "NOT_READY": 503, "AUTH_UNAVAILABLE": 503, "STORE_UNAVAILABLE": 503,
    "INTERNAL": 500,
}


# Codes that end a run's stream in RUN_ERROR instead of an HTTP error: a resume that does not fit
# the pending interrupt is the run's answer (AG-UI's interrupt guidance), and a run that failed
# says so after RUN_STARTED. A malformed request still gets its HTTP status from STATUS.
IN_STREAM: frozenset[str] = frozenset({"INTERRUPT_STALE", "APPROVAL_DIGEST_MISMATCH", "RESUME_INVALID"})
RUN_ERRORS: dict[str, str] = {
    ModelError.name: "The assistant could not reach its language model, so nothing more was done. "
                         "Please try again in a moment.",
    "INTERNAL": "Something went wrong on our side, so nothing more was done. Please try again.",
}


class ApiError(SkillcError):
    """An error answer: raise it in a handler, the app renders `{"error": {code, message, status}}`."""

    def __init__(self, code: str, message: str, *, status: int | None = None, **extra: Any) -> None:
        super().__init__(message)
        if code not in STATUS and status is None:
            raise KeyError(f"unknown API error code {code!r}")  # a programming error
        self.code = code
        self.message = message
        self.status = status or STATUS[code]
        self.extra = extra

    def body(self) -> dict[str, Any]:
        """The JSON body of the answer."""
        return {"error": {"code": self.code, "message": self.message, "status": self.status, **self.extra}}

    def response(self, headers: dict[str, str] | None = None) -> JSONResponse:
        """The answer as a Starlette response."""
        return JSONResponse(self.body(), status_code=self.status, headers=headers)
