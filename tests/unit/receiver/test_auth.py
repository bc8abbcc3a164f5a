"""Sender checks: addresses through proxies, tokens, shared secrets and signatures."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time

import pytest
from standardwebhooks.webhooks import Webhook

from receiver.auth import SenderPolicy, check_body, check_source, check_token, client_address
from receiver.errors import ForbiddenSourceError, UnauthenticatedError

PROXY = "10.0.0.5"


def test_forwarded_for_is_ignored_from_an_untrusted_peer() -> None:
    """A peer that is not a trusted proxy cannot claim another address."""
    assert client_address("203.0.113.9", "198.51.100.1", frozenset()) == "203.0.113.9"


def test_forwarded_for_is_believed_from_a_trusted_proxy() -> None:
    """Behind a trusted proxy the rightmost untrusted hop is the sender."""
    got = client_address(PROXY, "1.1.1.1, 198.51.100.7", frozenset({PROXY}))
    assert got == "198.51.100.7"


def test_a_garbled_hop_stops_the_walk() -> None:
    """A hop that is not an address is not believed, nor anything left of it."""
    assert client_address(PROXY, "198.51.100.7, junk", frozenset({PROXY})) == PROXY


def test_ipv6_addresses_are_normalised_before_matching() -> None:
    """An IPv6 address matches the allowlist whatever its spelling."""
    policy = SenderPolicy(allowed_ips=frozenset({"2001:db8::1"}))
    check_source(policy, client_address("2001:0db8:0:0:0:0:0:1", None, frozenset()))


def test_an_address_off_the_allowlist_is_forbidden() -> None:
    """With an allowlist, any other address gets 403."""
    with pytest.raises(ForbiddenSourceError):
        check_source(SenderPolicy(allowed_ips=frozenset({"192.0.2.1"})), "192.0.2.2")


def test_a_wrong_or_missing_path_token_is_refused() -> None:
    """The path token must match exactly."""
    policy = SenderPolicy(token="t" * 32)
    check_token(policy, "t" * 32)
    for presented in (None, "t" * 31, "u" * 32):
        with pytest.raises(UnauthenticatedError):
            check_token(policy, presented)


def test_the_shared_secret_header_must_match() -> None:
    """A delivery without the configured shared secret is refused."""
    policy = SenderPolicy(shared_secret="s" * 20)
    check_body(policy, {"x-webhook-secret": "s" * 20}, b"{}")
    with pytest.raises(UnauthenticatedError):
        check_body(policy, {"x-webhook-secret": "wrong"}, b"{}")


def test_hmac_sha512_of_the_raw_body_is_verified() -> None:
    """The HMAC header must be the hex HMAC-SHA512 of the exact body."""
    policy = SenderPolicy(hmac_secret="k" * 20)
    body = b'{"event":"x","data":{}}'
    good = hmac.new(b"k" * 20, body, hashlib.sha512).hexdigest()
    check_body(policy, {"x-webhook-signature": good}, body)
    check_body(policy, {"x-webhook-signature": "sha512=" + good.upper()}, body)
    with pytest.raises(UnauthenticatedError):
        check_body(policy, {"x-webhook-signature": good}, body + b" ")


def _standard_headers(
    secret: str, body: bytes, *, at: int, msg_id: str = "msg_1"
) -> dict[str, str]:
    signature = Webhook(secret).sign(msg_id, _dt(at), body.decode())
    return {"webhook-id": msg_id, "webhook-timestamp": str(at), "webhook-signature": signature}


def _dt(at: int):  # type: ignore[no-untyped-def]
    import datetime as dt

    return dt.datetime.fromtimestamp(at, tz=dt.UTC)


def test_standard_webhooks_signatures_are_verified_within_tolerance() -> None:
    """A fresh, correctly signed message passes; a tampered or stale one is refused."""
    secret = "whsec_" + base64.b64encode(b"0123456789abcdef0123").decode()
    policy = SenderPolicy(standard_secret=secret)
    body = b'{"event":"transfer.success","data":{}}'
    now = int(time.time())
    check_body(policy, _standard_headers(secret, body, at=now), body)
    with pytest.raises(UnauthenticatedError):
        check_body(policy, _standard_headers(secret, body, at=now), body.replace(b"x", b"y") + b" ")
    with pytest.raises(UnauthenticatedError):
        check_body(policy, _standard_headers(secret, body, at=now - 301), body)
    with pytest.raises(UnauthenticatedError):
        check_body(
            policy, {"webhook-id": "a", "webhook-timestamp": "x", "webhook-signature": "v1"}, body
        )
