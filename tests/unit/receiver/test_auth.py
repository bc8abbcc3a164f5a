"""Sender checks: addresses through proxies, tokens, shared secrets and signatures."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import time

import pytest
from standardwebhooks.webhooks import Webhook

from receiver.auth import (
    SenderPolicy,
    check_body,
    check_source,
    check_token,
    standard_key,
)
from receiver.errors import ForbiddenSourceError, UnauthenticatedError
from web.address import client_address


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
    secret = "whsec_" + base64.b64encode(b"0123456789abcdef01234567").decode()
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


SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
OTHER = "whsec_" + base64.b64encode(b"o" * 32).decode()
BODY = b'{"event":"transfer.success","data":{}}'


@pytest.mark.parametrize(
    "extra",
    ["v1,a", "v1", "v1,a,b", "", "v1a,AAAA", "v2,xyz", "v1,!!!!", "v1," + "A" * 43 + "="],
)
def test_one_valid_signature_passes_beside_a_malformed_or_wrong_one(extra: str) -> None:
    """A `webhook-signature` list passes when any entry is valid, whatever the others hold."""
    headers = _standard_headers(SECRET, BODY, at=int(time.time()))
    valid = headers["webhook-signature"]
    policy = SenderPolicy(standard_secret=SECRET)
    check_body(policy, {**headers, "webhook-signature": f"{extra} {valid}"}, BODY)
    check_body(policy, {**headers, "webhook-signature": f"{valid} {extra}"}, BODY)
    with pytest.raises(UnauthenticatedError):
        check_body(policy, {**headers, "webhook-signature": extra}, BODY)


def test_a_signature_by_another_key_only_is_refused() -> None:
    """Entries that are well formed but signed with another secret do not pass."""
    headers = _standard_headers(OTHER, BODY, at=int(time.time()))
    with pytest.raises(UnauthenticatedError):
        check_body(SenderPolicy(standard_secret=SECRET), headers, BODY)


@pytest.mark.parametrize("secret", ["whsec_", "whsec_!!!!", "whsec_short", "not-whsec"])
def test_an_unusable_standard_secret_is_a_401_not_a_crash(secret: str) -> None:
    """Whatever goes wrong inside the signature check answers 401, never an exception."""
    headers = _standard_headers(SECRET, BODY, at=int(time.time()))
    with pytest.raises(UnauthenticatedError):
        check_body(SenderPolicy(standard_secret=secret), headers, BODY)


@pytest.mark.parametrize(
    "headers",
    [
        {"webhook-id": "m", "webhook-timestamp": "nan", "webhook-signature": "v1,AAAA"},
        {"webhook-id": "m", "webhook-timestamp": "1e400", "webhook-signature": "v1,AAAA"},
        {"webhook-id": "m", "webhook-timestamp": "-1e20", "webhook-signature": "v1,AAAA"},
        {"webhook-id": "m", "webhook-timestamp": "1", "webhook-signature": "v1,AAAA  v1"},
    ],
)
def test_strange_standard_headers_are_a_401(headers: dict[str, str]) -> None:
    """Timestamps and signature lists no library expects are refused, not raised."""
    with pytest.raises(UnauthenticatedError):
        check_body(SenderPolicy(standard_secret=SECRET), headers, b"\xff\xfe")


@pytest.mark.parametrize("size", [24, 32, 64])
def test_a_standard_key_of_24_to_64_bytes_is_accepted_padded_or_not(size: int) -> None:
    """The spec's 24-64 byte keys are read from base64 with or without its padding."""
    key = bytes(range(size))
    encoded = base64.b64encode(key).decode()
    assert standard_key("whsec_" + encoded) == key
    assert standard_key("whsec_" + encoded.rstrip("=")) == key


@pytest.mark.parametrize(
    ("secret", "says"),
    [
        ("whsec_", "24 to 64 bytes"),
        ("whsec_!!!!", "followed by base64"),
        ("whsec_short", "followed by base64"),
        ("whsec_" + base64.b64encode(b"k" * 23).decode(), "(this one has 23)"),
        ("whsec_" + base64.b64encode(b"k" * 65).decode(), "(this one has 65)"),
        (base64.b64encode(b"k" * 32).decode(), "must start with whsec_"),
    ],
)
def test_a_malformed_standard_secret_is_refused_saying_why(secret: str, says: str) -> None:
    """Empty, non-base64, too short or too long keys are a ValueError that says which."""
    with pytest.raises(ValueError, match=re.escape(says)):
        standard_key(secret)


def test_the_sender_policy_repr_hides_every_secret() -> None:
    """No secret of a policy appears in its repr, while the settings that are not secret do."""
    secrets = {
        "token": "TokenValue0123456789",
        "shared_secret": "shared-secret-value-0123",
        "hmac_secret": "hmac-secret-value-0123",
        "standard_secret": SECRET,
    }
    policy = SenderPolicy(**secrets, allowed_ips=frozenset({"192.0.2.1"}))
    shown = repr(policy)
    for name, value in secrets.items():
        assert value not in shown, name
        assert f"{name}='**********'" in shown
    assert "192.0.2.1" in shown
    assert "standard_secret=None" in repr(SenderPolicy())
