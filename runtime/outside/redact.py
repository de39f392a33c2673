"""Credentials out of every URL the service prints: one function, used wherever a URL is shown.

A studio service or a database is often addressed as `scheme://user:password@host/…`; that text
reaches `/readyz` (no identity needed), `studio.stale` events, the trace, error messages and logs.
`redact_urls` replaces the user-information part of every URL in a text with `***`, so the host
stays visible for diagnosis and the credentials never are. `mask_args` does the same for a
tool's arguments at the paths its contract marks sensitive (the trace, audit digests, REST).
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from skillc.runtime.compiled.paths import at_path

MASK = "***"
# scheme://userinfo@ — userinfo cannot hold "/", "?", "#", "@" or whitespace (RFC 3986 §3.2.1)
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s]+@")


def redact_urls(text: str) -> str:
    """`text` with the user and password of every URL in it shown as `***`."""
    if "@" not in text:
        return text
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)


def mask_args(args: Any, sensitive_paths: Sequence[tuple[Any, ...]]) -> Any:
    """A copy of `args` with the values at the contract's sensitive paths replaced by "***"."""
    if not sensitive_paths or not isinstance(args, dict):
        return args
    out = json.loads(json.dumps(args, default=str))
    for parts in sensitive_paths:
        at_path(out, parts, _put_mask)
    return out


def _put_mask(container: Any, key: Any) -> None:
    container[key] = MASK
