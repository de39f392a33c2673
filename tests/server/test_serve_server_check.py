"""`skillc serve` at start runs the MCP server check `skillc chat` prints: each configured
server's tool count, and a warning (once) per skill whose toolNames no server serves."""
from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from skillc.runtime.server import create_app

from serve_harness import write_config


class Records(logging.Handler):
    """Keeps the records it is given (caplog sees nothing once a CLI test has run: `skillc.logs`
    stops the `skillc` logger from propagating)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def server_log() -> Iterator[Records]:
    """What `skillc.server` logs during the test, at INFO and above."""
    logger, handler = logging.getLogger("skillc.server"), Records()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_serve_logs_tool_counts_and_unserved_tools_once(compiled: Path, fake_model: Any, tmp_path: Path,
                                                        server_log: Records) -> None:
    app = create_app(config_path=write_config(tmp_path, str(compiled), fake_model.url))
    with TestClient(app) as client:  # the lifespan starts the CMS double from the config
        assert client.get("/healthz").status_code == 200
    mine = server_log.records
    counts = [r.getMessage() for r in mine if r.getMessage().startswith("MCP server ")]
    assert len(counts) == 1 and counts[0].startswith("MCP server cms: ") and not counts[0].endswith(": 0 tools")
    unserved = [r.getMessage() for r in mine if r.levelno == logging.WARNING and "served by no MCP server" in r.getMessage()]
    # the CMS double serves no invoice tools (and not every CMS one): each such skill is named once
    ctx = app.state.ctx
    short = sorted(k for k, m in ctx.feed.skills.items() if set(m.SKILL.tool_names) - set(ctx.runtime.gateway.catalog))
    assert "inv.invoice.issue" in short
    assert sorted(line.split(":", 1)[0].removeprefix("skill ") for line in unserved) == short
