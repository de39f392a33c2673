"""Credentials out of every URL the service prints: one function, used wherever a URL is shown.

A studio service or a database is often addressed as `scheme://user:password@host/…`; that text
reaches `/readyz` (no identity needed), `studio.stale` events, the trace, error messages and logs.
`redact_urls` replaces the user-information part of every URL in a text with `***`, so the host
stays visible for diagnosis and the credentials never are.
"""
from __future__ import annotations

import re

MASK = "***"
# scheme://userinfo@ — userinfo cannot hold "/", "?", "#", "@" or whitespace (RFC 3986 §3.2.1)
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s]+@")


def redact_urls(text: str) -> str:
    """`text` with the user and password of every URL in it shown as `***`."""
    if "@" not in text:
        return text
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
