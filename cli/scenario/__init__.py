"""`skillc scenario`: runs conformance scenarios through the real runtime.

`canned` serves a scenario's `tools:` from an in-process MCP server with canned answers and
faults (`build_canned_server`).
"""
from __future__ import annotations

from skillc.scenario.canned import build_canned_server

__all__ = ["build_canned_server"]
