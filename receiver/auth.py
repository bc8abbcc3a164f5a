"""Sender checks for webhook deliveries: path token, shared secret, IP allowlist, HMAC, and
Standard Webhooks signatures. Each is optional; all that are configured must pass."""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from receiver.errors import ForbiddenSourceError, UnauthenticatedError

STANDARD_TOLERANCE_SECONDS = 300  # the Standard Webhooks default: ±5 minutes


@dataclass(frozen=True)
class SenderPolicy:
    """What a delivery must prove; built once from settings."""

    token: str | None = None
    shared_secret: str | None = None
    secret_header: str = "X-Webhook-Secret"
    allowed_ips: frozenset[str] = frozenset()
    trusted_proxies: frozenset[str] = frozenset()
    hmac_secret: str | None = None
    hmac_header: str = "X-Webhook-Signature"
    standard_secret: str | None = None


@functools.lru_cache(maxsize=4096)
def _normal(address: str) -> str | None:
    try:
        return str(ipaddress.ip_address(address.strip().strip("[]")))
    except ValueError:
        return None


def client_address(
    peer: str | None, forwarded_for: str | None, trusted: frozenset[str]
) -> str | None:
    """The delivering address: `X-Forwarded-For` is believed only from a trusted proxy.

    Walk the header right to left past our own proxies; the first untrusted hop is the sender.
    """
    address = _normal(peer) if peer else None
    if address is None or address not in trusted or not forwarded_for:
        return address
    for hop in reversed(forwarded_for.split(",")):
        hop_address = _normal(hop)
        if hop_address is None:
            return address  # a garbled hop: believe nothing further left of it
        if hop_address not in trusted:
            return hop_address
        address = hop_address
    return address


def check_source(policy: SenderPolicy, address: str | None) -> None:
    """403 unless the allowlist is off or `address` is on it (exact match)."""
    if policy.allowed_ips and (address is None or address not in policy.allowed_ips):
        raise ForbiddenSourceError("sender address is not allowed")


def check_token(policy: SenderPolicy, presented: str | None) -> None:
    """401 unless the path token matches (constant time)."""
    if policy.token is None:
        return
    if presented is None or not hmac.compare_digest(presented.encode(), policy.token.encode()):
        raise UnauthenticatedError("webhook token is wrong")


def check_body(policy: SenderPolicy, headers: Mapping[str, str], body: bytes) -> None:
    """401 unless the shared secret, HMAC and Standard Webhooks checks that are on pass."""
    if policy.shared_secret is not None:
        presented = headers.get(policy.secret_header.lower(), "")
        if not hmac.compare_digest(presented.encode(), policy.shared_secret.encode()):
            raise UnauthenticatedError(f"{policy.secret_header} is missing or wrong")
    if policy.hmac_secret is not None:
        presented = headers.get(policy.hmac_header.lower(), "").strip().lower()
        presented = presented.removeprefix("sha512=")
        expected = hmac.new(policy.hmac_secret.encode(), body, hashlib.sha512).hexdigest()
        if not hmac.compare_digest(presented.encode(), expected.encode()):
            raise UnauthenticatedError(f"{policy.hmac_header} is missing or wrong")
    if policy.standard_secret is not None:
        try:
            Webhook(policy.standard_secret).verify(body, dict(headers), json_parse=False)
        except (WebhookVerificationError, ValueError, TypeError) as exc:
            raise UnauthenticatedError(f"webhook signature rejected: {exc}") from None
