"""`skillc serve`: the runtime as an ASGI service speaking AG-UI 1.0, behind a platform's gateway.

docs/API.md is the contract. `create_app(...)` builds the Starlette app from route modules
(`health`, `agui`, `rest`, `metrics`, and the console's); `ServerContext` is what a route module
gets: the runtime, caller identification, session ownership, the run registry. Nothing here
imports the compiler or names it: compile-on-load is the callable `create_app(compiler=...)` is
given (`skillc serve` passes its own).
"""
from __future__ import annotations

from typing import Any

__all__ = ["ApiError", "ServerContext", "create_app", "sign_request"]


def __getattr__(name: str) -> Any:
    # Lazy: importing the package (e.g. for the console's router) must not start anything.
    if name == "create_app":
        from skillc.runtime.server.app import create_app

        return create_app
    if name == "ServerContext":
        from skillc.runtime.server.context import ServerContext

        return ServerContext
    if name == "ApiError":
        from skillc.runtime.server.errors import ApiError

        return ApiError
    if name == "sign_request":
        from skillc.runtime.server.auth import sign_request

        return sign_request
    raise AttributeError(name)
