"""The one wait of the suite: poll a condition until it holds, with a bound (never a pause).

A test waits on state another process or thread changes (a row committed, a port listening, a
lease given back): `wait_for(condition, what)` checks `condition()` every 20 ms and fails with
"timed out waiting for <what>" once `deadline` seconds have passed. The deadline is a bound for a
loaded machine, not a timing the test asserts; a healthy run returns in well under a second or two.
"""
from __future__ import annotations

import time
from collections.abc import Callable

DEADLINE = 120.0  # seconds: a bound on polling, never a pause (a loaded 2-core machine starts processes slowly)
INTERVAL = 0.02  # seconds between two looks at the condition


def wait_for(condition: Callable[[], object], what: str, deadline: float = DEADLINE) -> None:
    """Poll `condition()` until it is truthy; AssertionError naming `what` after `deadline` seconds."""
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(INTERVAL)
