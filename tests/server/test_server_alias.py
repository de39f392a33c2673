"""`skillc.server` is the short, documented import path of the service face."""
from __future__ import annotations

import skillc.runtime.server as runtime_server
import skillc.server as server


def test_server_alias_is_the_runtime_server() -> None:
    assert server.create_app is runtime_server.create_app
    assert server.sign_request is runtime_server.sign_request
    assert issubclass(server.ApiError, Exception)
