"""Gateway identity checks that need no server: development mode, identity decoding, hidden fields,
the nonce window, and the refusal to start without a secret."""
from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from skillc.runtime.server.auth import DEV_IDENTITY, GatewayAuth, NonceCache, decode_identity, sign_request
from skillc.runtime.server.errors import ApiError


def test_development_mode_is_explicit_and_takes_the_unsigned_identity() -> None:
    with pytest.raises(ValueError, match="no gateway secret"):
        GatewayAuth(secret=None)
    dev = GatewayAuth(secret=None, dev=True)
    assert dev.identify("GET", "/api/sessions", {}, b"").platform == DEV_IDENTITY
    raw = {"x-skillc-identity": json.dumps({"userId": 5, "organId": 2, "passportId": "p"})}
    me = dev.identify("GET", "/api/sessions", raw, b"")
    assert me.dev and me.platform == {"userId": 5, "organId": 2} and me.owner == "2:5"  # §11 fields only


def test_identity_header_forms_and_hidden_fields() -> None:
    text = json.dumps({"userId": 7, "name": "刘", "passportId": "x", "extra": 1}, ensure_ascii=False).encode()
    for form in (base64.b64encode(text).decode(), base64.urlsafe_b64encode(text).decode().rstrip("=")):
        assert decode_identity(form, hidden=("passportId",)) == {"userId": 7, "name": "刘"}
    for bad in ("%%%", base64.b64encode(b"[1]").decode(), base64.b64encode(b'{"name": "x"}').decode()):
        with pytest.raises(ApiError) as err:
            decode_identity(bad)
        assert err.value.code == "AUTH_BAD_IDENTITY" and err.value.status == 401


def test_a_signed_request_verifies_once_within_the_window() -> None:
    now = 1_800_000_000.0
    auth = GatewayAuth(secret="s3cret", skew=300, clock=lambda: now)
    headers = {k.lower(): v for k, v in sign_request("s3cret", "POST", "/agui?x=1", b"{}", {"userId": 1}, now=now - 299).items()}
    assert auth.identify("POST", "/agui?x=1", headers, b"{}").owner == ":1"
    with pytest.raises(ApiError) as err:
        auth.identify("POST", "/agui?x=1", headers, b"{}")
    assert err.value.code == "AUTH_REPLAYED"
    moved = {k.lower(): v for k, v in sign_request("s3cret", "POST", "/agui", b"{}", {"userId": 1}, now=now).items()}
    with pytest.raises(ApiError) as err:
        auth.identify("POST", "/agui?x=1", moved, b"{}")  # signed for another target
    assert err.value.code == "AUTH_BAD_SIGNATURE"


def test_the_nonce_cache_forgets_only_outside_the_window() -> None:
    cache = NonceCache(window=10)
    assert not cache.seen("n-000001", 100.0) and cache.seen("n-000001", 105.0)
    assert not cache.seen("n-000002", 200.0)  # n-000001 is long expired now
    assert not cache.seen("n-000001", 200.0)


def test_a_nonce_recorded_in_a_shared_store_is_refused_by_every_worker(tmp_path: Any) -> None:
    # Two workers (two stores on one database, two GatewayAuth objects): a request accepted by
    # one is a replay for the other, and for a worker started after it.
    from skillc.runtime.server.auth import StoredNonces
    from skillc.runtime.store import SQLiteStore

    now = 1_800_000_000.0
    workers = []
    for _ in range(3):
        auth = GatewayAuth(secret="s3cret", skew=300, clock=lambda: now)
        auth.nonces = StoredNonces(SQLiteStore(tmp_path / "shared.sqlite"), auth.skew)
        workers.append(auth)
    headers = {k.lower(): v for k, v in sign_request("s3cret", "GET", "/api/sessions", b"", {"userId": 1}, now=now).items()}
    assert workers[0].identify("GET", "/api/sessions", headers, b"").owner == ":1"
    for other in workers[1:]:
        with pytest.raises(ApiError) as err:
            other.identify("GET", "/api/sessions", headers, b"")
        assert err.value.code == "AUTH_REPLAYED"


def test_a_store_that_cannot_record_the_nonce_refuses_the_request() -> None:
    from skillc.runtime.server.auth import StoredNonces
    from skillc.runtime.store import StoreUnavailable

    class Down:
        def claim_nonce(self, nonce: str, now: float, keep: float) -> bool:
            raise StoreUnavailable("connection refused")

    now = 1_800_000_000.0
    auth = GatewayAuth(secret="s3cret", skew=300, clock=lambda: now)
    auth.nonces = StoredNonces(Down(), auth.skew)
    headers = {k.lower(): v for k, v in sign_request("s3cret", "GET", "/x", b"", {"userId": 1}, now=now).items()}
    with pytest.raises(ApiError) as err:
        auth.identify("GET", "/x", headers, b"")
    assert err.value.code == "AUTH_UNAVAILABLE" and err.value.status == 503


def test_an_identity_header_is_decoded_once_and_every_request_is_still_checked(monkeypatch: Any) -> None:
    """The decoded identity is cached per header text (bounded LRU, docs/ARCHITECTURE.md Caches);
    the signature and the nonce are checked on every request, cached header or not."""
    from skillc.runtime.server import auth as auth_mod

    decoded: list[str] = []
    real = auth_mod.decode_identity
    monkeypatch.setattr(auth_mod, "decode_identity", lambda v, hidden=(): decoded.append(v) or real(v, hidden))
    now = 1_800_000_000.0
    auth = GatewayAuth(secret="s3cret", skew=300, clock=lambda: now)

    def signed(platform: dict[str, Any], body: bytes = b"{}") -> dict[str, str]:
        return {k.lower(): v for k, v in sign_request("s3cret", "POST", "/agui", body, platform, now=now).items()}

    first = auth.identify("POST", "/agui", signed({"userId": 1, "organId": 2}), b"{}")
    first.platform["userId"] = 99  # what a caller does with its copy stays its own
    again = auth.identify("POST", "/agui", signed({"userId": 1, "organId": 2}), b"{}")
    assert again.platform == {"userId": 1, "organId": 2} and len(decoded) == 1
    forged = signed({"userId": 1, "organId": 2}, b"{}")
    with pytest.raises(ApiError) as err:  # the same (cached) identity over another body: refused
        auth.identify("POST", "/agui", forged, b'{"other": 1}')
    assert err.value.code == "AUTH_BAD_SIGNATURE"
    auth.identify("POST", "/agui", forged, b"{}")
    with pytest.raises(ApiError) as err:  # the same request again: a replay, cached identity or not
        auth.identify("POST", "/agui", forged, b"{}")
    assert err.value.code == "AUTH_REPLAYED"
    for user in range(auth_mod.IDENTITIES + 5):  # bounded: the oldest header goes first
        auth.identify("POST", "/agui", signed({"userId": 1000 + user}), b"{}")
    assert len(auth._identities) == auth_mod.IDENTITIES
    auth.identify("POST", "/agui", signed({"userId": 1, "organId": 2}), b"{}")
    assert decoded.count(decoded[0]) == 2  # evicted, decoded again
