"""Logging for the command line: the library only logs (`logging`, a NullHandler on `skillc`);
the CLI installs the one handler that shows records, at the level -v / -q / --log-level ask.

A record is shown once, as `skillc: warning: message`; a traceback only at debug level (-vv),
so an internal error the runtime already answered is one line, not a page.
"""
from __future__ import annotations

import logging
import sys

LEVELS = ("debug", "info", "warning", "error", "critical")


class _Formatter(logging.Formatter):
    """`skillc: warning: message`; exception details only when debugging."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"skillc: {record.levelname.lower()}: {record.getMessage()}"
        if record.exc_info and logging.getLogger("skillc").isEnabledFor(logging.DEBUG):
            text += "\n" + self.formatException(record.exc_info)
        elif record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f" ({type(exc).__name__}: {exc}; -vv shows the traceback)"
        return text


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """The CLI's handler (a marker type, so a second configure replaces it instead of adding one)."""


def shown_elsewhere(*kinds: str) -> None:
    """Hide records the running command already shows its own way, so nothing prints twice:
    "internal-error" (a turn's unexpected error: traced, shown as an error line and answered) and
    "server-down" (an MCP server that did not start: the scenario report names it). With -v or
    lower levels everything shows."""
    logger = logging.getLogger("skillc")
    if logger.level < logging.WARNING:
        return

    def keep(record: logging.LogRecord) -> bool:
        if "internal-error" in kinds and record.exc_info and record.name == "skillc.runtime":
            return False
        if "server-down" in kinds and record.name == "skillc.runtime.mcp.gateway" and "unreachable" in record.getMessage():
            return False
        return True

    for handler in logger.handlers:
        if isinstance(handler, _Handler):
            handler.addFilter(keep)


def level_for(verbose: int = 0, quiet: int = 0, name: str | None = None) -> int:
    """The `skillc` logger's level: --log-level wins; else warning, -v info, -vv debug, -q error."""
    if name and name.lower() in LEVELS:
        level: int = getattr(logging, name.upper())
        return level
    if verbose:
        return logging.INFO if verbose == 1 else logging.DEBUG
    if quiet:
        return logging.ERROR if quiet == 1 else logging.CRITICAL
    return logging.WARNING


def configure(verbose: int = 0, quiet: int = 0, name: str | None = None) -> None:
    """Show `skillc.*` records on the current stderr at the chosen level, through one handler."""
    logger = logging.getLogger("skillc")
    for old in [h for h in logger.handlers if isinstance(h, _Handler)]:
        logger.removeHandler(old)
    handler = _Handler(sys.stderr)
    handler.setFormatter(_Formatter())
    logger.addHandler(handler)
    logger.setLevel(level_for(verbose, quiet, name))
    logger.propagate = False  # an embedding app's root handlers would print it a second time
