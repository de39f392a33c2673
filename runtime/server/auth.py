"""Caller identity from gateway-signed headers (docs/API.md §1): HMAC-SHA256, skew window, nonces.

The platform fields of spec §11 reach a session only through here, never from a request body.
`sign_request` is what a gateway (or a test, or the bench) does on its side.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping
from urllib.parse import quote

from skillc.runtime.text.idtext import ascii_int
from skillc.runtime.server.errors import ApiError
from skillc.runtime.words.vocab import PLATFORM_FIELDS  # the platform fields of §11, spelled once

log = logging.getLogger("skillc.server.auth")

H_IDENTITY = "x-skillc-identity"
H_TIMESTAMP = "x-skillc-timestamp"
H_NONCE = "x-skillc-nonce"
H_SIGNATURE = "x-skillc-signature"
DEV_HEADER = ("X-Skillc-Auth", "dev-insecure")
# the example data's organisation and user, so the bundled studio plays as it is in development mode
DEV_IDENTITY: dict[str, Any] = {"userId": 7, "name": "dev", "organId": 9}
_NONCE = re.compile(r"[A-Za-z0-9._~-]{8,128}")  # whole values only (fullmatch)
IDENTITIES = 1024  # decoded identity headers a GatewayAuth keeps, least recently used out first
_SIGNATURE = re.compile(r"v1=([0-9a-f]{64})")


@dataclass(frozen=True)
class Identity:
    """An authenticated caller: its §11 platform fields and the owner key its sessions carry."""

    platform: dict[str, Any]
    dev: bool = False

    @property
    def owner(self) -> str:
        """`organId:userId`: who may touch a session (docs/API.md §1 Ownership)."""
        return owner_of(self.platform)


def owner_of(platform: Mapping[str, Any]) -> str:
    """The owner key of a platform identity (also of a stored session's platform fields):
    `organId:userId`, each part percent-escaped, so the key is injective ({organId "1", userId
    "2:3"} is `1:2%3A3`, {organId "1:2", userId "3"} is `1%3A2:3`); plain ids read as before."""
    return f"{quote(str(platform.get('organId', '')), safe='')}:{quote(str(platform.get('userId', '')), safe='')}"


def body_digest(body: bytes) -> str:
    """Hex SHA-256 of a request body, as signed."""
    return hashlib.sha256(body).hexdigest()


def string_to_sign(timestamp: str, nonce: str, method: str, target: str, body: bytes, identity: str) -> bytes:
    """The exact bytes a gateway signs (docs/API.md §1)."""
    return "\n".join(("v1", timestamp, nonce, method.upper(), target, body_digest(body), identity)).encode()


def encode_identity(platform: Mapping[str, Any]) -> str:
    """The `X-Skillc-Identity` value for a platform identity: base64url of compact JSON."""
    raw = json.dumps(dict(platform), ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def sign_request(secret: str, method: str, target: str, body: bytes, platform: Mapping[str, Any], *,
                 now: float | None = None, nonce: str | None = None) -> dict[str, str]:
    """The four headers a gateway adds to a request for `platform` (target = path + query)."""
    ts = str(int(time.time() if now is None else now))
    nonce = nonce or secrets.token_urlsafe(16)
    identity = encode_identity(platform)
    mac = hmac.new(secret.encode(), string_to_sign(ts, nonce, method, target, body, identity), hashlib.sha256)
    return {"X-Skillc-Identity": identity, "X-Skillc-Timestamp": ts, "X-Skillc-Nonce": nonce,
            "X-Skillc-Signature": f"v1={mac.hexdigest()}"}


def decode_identity(value: str, hidden: tuple[str, ...] = ()) -> dict[str, Any]:
    """The platform fields of an identity header; ApiError AUTH_BAD_IDENTITY when unusable."""
    text = value.strip()
    try:
        if not text.startswith("{"):
            padded = text + "=" * (-len(text) % 4)
            text = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True).decode()
        data = json.loads(text)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ApiError("AUTH_BAD_IDENTITY", "X-Skillc-Identity is not base64 of a JSON object") from None
    if not isinstance(data, dict):
        raise ApiError("AUTH_BAD_IDENTITY", "X-Skillc-Identity is not a JSON object")
    platform = {k: v for k, v in data.items() if k in PLATFORM_FIELDS and k not in hidden}
    if platform.get("userId") in (None, ""):
        raise ApiError("AUTH_BAD_IDENTITY", "the identity has no userId")
    return platform


class NonceCache:
    """Nonces seen inside the skew window, so a replayed request is refused (bounded, per process)."""

    def __init__(self, window: float, limit: int = 200_000) -> None:
        self.window = window
        self.limit = limit
        self._seen: OrderedDict[str, float] = OrderedDict()

    def seen(self, nonce: str, now: float) -> bool:
        """True if `nonce` was used before; otherwise remember it."""
        while self._seen:
            oldest, at = next(iter(self._seen.items()))
            if at >= now - 2 * self.window and len(self._seen) < self.limit:
                break
            self._seen.popitem(last=False)
        if nonce in self._seen:
            return True
        self._seen[nonce] = now
        return False


class StoredNonces:
    """Nonces recorded in the runtime's store, so a replay is refused by every worker sharing it
    (several `serve` processes on one PostgreSQL database), and after a restart. Fails closed:
    a store that cannot answer refuses the request (503 AUTH_UNAVAILABLE), it never lets one in."""

    def __init__(self, store: Any, window: float) -> None:
        self.store = store
        self.window = window

    def seen(self, nonce: str, now: float) -> bool:
        """True if `nonce` was used before, by any worker; otherwise record it."""
        from skillc.runtime.store.base import StoreError

        try:
            return not self.store.claim_nonce(nonce, now, keep=2 * self.window)
        except StoreError as exc:
            raise _unavailable(exc) from exc

    async def seen_awaited(self, nonce: str, now: float) -> bool:
        """`seen`, awaited through the store's async face (PostgreSQL: on the runtime's loop)."""
        from skillc.runtime.store import offloop
        from skillc.runtime.store.base import StoreError

        try:
            return not await offloop.call(self.store, self.store.claim_nonce, nonce, now, keep=2 * self.window)
        except StoreError as exc:
            raise _unavailable(exc) from exc


def _unavailable(exc: Exception) -> ApiError:
    return ApiError("AUTH_UNAVAILABLE", f"the replayed-request check cannot reach the store: {exc}")


def _replayed() -> ApiError:
    return ApiError("AUTH_REPLAYED", "this nonce was already used: a replayed request")


@dataclass
class GatewayAuth:
    """Checks a request's signed identity headers; `dev` accepts unsigned ones (loudly)."""

    secret: str | None
    skew: float = 300.0
    dev: bool = False
    hidden: tuple[str, ...] = ()
    clock: Callable[[], float] = time.time
    dev_identity: dict[str, Any] | None = None
    """Who an unsigned request without X-Skillc-Identity is in development mode (default DEV_IDENTITY)."""
    nonces: NonceCache | StoredNonces = field(init=False)  # in memory until the store is open
    _last_warning: float = field(default=0.0, init=False)
    # X-Skillc-Identity text -> its platform fields, for headers whose request's signature held
    # (IDENTITIES at most, LRU): a caller's every request carries the same header, decoded once.
    # The signature and the nonce are checked on every request all the same.
    _identities: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict, init=False, repr=False)
    _identities_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.dev and not self.secret:
            raise ValueError("no gateway secret: set [server] secret_env / SKILLC_GATEWAY_SECRET, "
                             "or run in development mode (--dev-insecure)")
        self.nonces = NonceCache(self.skew)

    def precheck(self, headers: Mapping[str, str]) -> tuple[str, str, str, str] | None:
        """What can be refused before the body is read (the signature covers the body): the four
        headers present, the timestamp ASCII digits inside the window, nonce and signature well
        formed. Returns (identity, timestamp, nonce, signature hex); None in development mode."""
        if self.dev:
            return None
        values = [headers.get(h) for h in (H_IDENTITY, H_TIMESTAMP, H_NONCE, H_SIGNATURE)]
        if any(not v for v in values):
            raise ApiError("AUTH_MISSING", "unsigned request: X-Skillc-Identity, X-Skillc-Timestamp, "
                           "X-Skillc-Nonce and X-Skillc-Signature are required")
        identity, ts, nonce, signature = (str(v) for v in values)
        stamp = ascii_int(ts)
        if stamp is None or abs(self.clock() - stamp) > self.skew:
            raise ApiError("AUTH_EXPIRED", f"X-Skillc-Timestamp is outside the {self.skew:g} s window")
        match = _SIGNATURE.fullmatch(signature)
        if _NONCE.fullmatch(nonce) is None or match is None:
            raise ApiError("AUTH_BAD_SIGNATURE", "malformed nonce or signature")
        return identity, ts, nonce, match.group(1)

    def identify(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> Identity:
        """The caller of one request, or ApiError 401 (docs/API.md §1, checks in order)."""
        caller, nonce, now = self.verify(method, target, headers, body)
        if nonce is not None:
            self.claim(nonce, now)
        return caller

    def verify(self, method: str, target: str, headers: Mapping[str, str],
               body: bytes) -> tuple[Identity, str | None, float]:
        """Every check but the replay: (the caller, the nonce still to `claim`, the time of the
        check); the nonce is None in development mode. ApiError 401 when a check fails."""
        checked = self.precheck(headers)
        if checked is None:
            return self._dev_identity(headers), None, 0.0
        identity, ts, nonce, signature = checked
        now = self.clock()
        expected = hmac.new(str(self.secret).encode(), string_to_sign(ts, nonce, method, target, body, identity),
                            hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, signature):
            raise ApiError("AUTH_BAD_SIGNATURE", "the signature does not match this request")
        return Identity(self._platform_of(identity)), nonce, now

    def claim(self, nonce: str, now: float) -> None:
        """Record a verified request's nonce; ApiError AUTH_REPLAYED when it was used before
        (with a store, on the store's threads: it writes)."""
        if self.nonces.seen(nonce, now):
            raise _replayed()

    async def claim_awaited(self, nonce: str, now: float) -> None:
        """`claim` for a coroutine, the store's async face awaited (no thread). Only a nonce kept in
        the store is claimed later than `verify` (one in memory is claimed there at once)."""
        assert isinstance(self.nonces, StoredNonces)
        if await self.nonces.seen_awaited(nonce, now):
            raise _replayed()

    def _platform_of(self, header: str) -> dict[str, Any]:
        """The platform fields of a verified identity header, decoded once per header text (a
        copy each time: a caller may change what it gets)."""
        with self._identities_lock:
            found = self._identities.get(header)
            if found is not None:
                self._identities.move_to_end(header)
                return dict(found)
        platform = decode_identity(header, self.hidden)
        with self._identities_lock:
            self._identities[header] = platform
            while len(self._identities) > IDENTITIES:
                self._identities.popitem(last=False)
        return dict(platform)

    def _dev_identity(self, headers: Mapping[str, str]) -> Identity:
        now = self.clock()
        if now - self._last_warning > 60:
            self._last_warning = now
            log.warning("DEVELOPMENT MODE: requests are NOT authenticated (skillc serve --dev-insecure)")
        raw = headers.get(H_IDENTITY)
        return Identity(decode_identity(raw, self.hidden) if raw else dict(self.dev_identity or DEV_IDENTITY), dev=True)
