"""A child process on a pseudo-terminal, read until a marker with a deadline (no sleeps)."""
from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path


class Terminal:
    """A child process on a pty, read until a marker with a deadline (no sleeps)."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, close_fds=True)
        os.close(slave)
        self.seen = ""

    def expect(self, marker: str, timeout: float = 60.0) -> str:
        """Everything up to and including `marker`."""
        deadline = time.monotonic() + timeout
        while marker not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"no {marker!r} on the terminal; saw:\n{self.seen}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096).decode(errors="replace")
                except OSError:
                    chunk = ""
                assert chunk or self.proc.poll() is None, f"process ended before {marker!r}:\n{self.seen}"
                self.seen += chunk
        head, _, self.seen = self.seen.partition(marker)
        return head + marker

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> int:
        """Wait for the exit status (killing a process that hangs)."""
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            os.close(self.master)
