"""A test double for the `Model` interface: answers from a Python callable or a list, recording requests."""
from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from skillc.runtime.model.base import ModelError, ModelRequest, ModelResponse

Responder = Callable[[ModelRequest], ModelResponse | Awaitable[ModelResponse]]


class ModelDouble:
    """A `Model` for unit tests.

    Built from a callable `(request) -> ModelResponse` (sync or async; it may raise ModelError to
    simulate a failure) or from a list of responses played in order, where an exception instance
    in the list is raised instead. Every request is kept in `requests`.
    """

    def __init__(self, answers: Responder | Iterable[ModelResponse | BaseException]) -> None:
        """`answers`: a callable, or the responses (or exceptions) to give in order."""
        self.requests: list[ModelRequest] = []
        self._responder: Responder | None = None
        self._queue: deque[ModelResponse | BaseException] = deque()
        if callable(answers):
            self._responder = answers
        else:
            self._queue.extend(answers)

    @property
    def remaining(self) -> int:
        """How many listed responses are left (0 for a callable double)."""
        return len(self._queue)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Record the request and answer it."""
        self.requests.append(request)
        answer: Any  # a response, an awaitable of one, or an exception to raise
        if self._responder is not None:
            answer = self._responder(request)
            if inspect.isawaitable(answer):
                answer = await answer
        elif self._queue:
            answer = self._queue.popleft()
        else:
            raise ModelError(f"model double: no response left for request {len(self.requests)} "
                             f"({request.purpose})")
        if isinstance(answer, BaseException):
            raise answer
        if not isinstance(answer, ModelResponse):
            raise TypeError(f"model double: expected a ModelResponse, got {type(answer).__name__}")
        return answer
