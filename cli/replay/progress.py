"""A progress bar on stderr for long replays: only on a terminal, redrawn at most ten times a
second, and wiped when the replay ends so the report starts on a clean line."""
from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 30
# Inputs smaller than this finish before a bar would be readable.
LONG_INPUT = 1 << 20


class Bar:
    """bar(read, total, calls) draws; bar.close() wipes."""

    def __init__(self, stream: TextIO | None = None, *, clock: object = time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.clock = clock
        self.shown = False
        self.last = 0.0

    def __call__(self, read: int, total: int, calls: int) -> None:
        now = self.clock()  # type: ignore[operator]
        if total < LONG_INPUT or (self.shown and now - self.last < 0.1):
            return
        self.last, self.shown = now, True
        part = min(1.0, read / total) if total else 1.0
        filled = int(part * WIDTH)
        self.stream.write(f"\r\033[K[{'#' * filled}{'.' * (WIDTH - filled)}] {part:4.0%}  {calls:,} calls judged")
        self.stream.flush()

    def close(self) -> None:
        """Wipe the bar (if one was drawn)."""
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
