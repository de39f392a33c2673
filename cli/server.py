"""`skillc.server`: the service face, importable for users who mount it in their own ASGI stack.

The app lives in the runtime half (`skillc.runtime.server`), so it runs without the compiler;
this module only gives it the short name the docs use.
"""
from __future__ import annotations

from skillc.runtime.server import ApiError, create_app, sign_request

__all__ = ["ApiError", "create_app", "sign_request"]
