"""Sender checks for webhook deliveries: path token, shared secret, IP allowlist, HMAC, and
Standard Webhooks signatures. Each is optional; all that are configured must pass."""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, fields

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from receiver.errors import ForbiddenSourceError, UnauthenticatedError

STANDARD_PREFIX = "whsec_"
# Standard Webhooks spec, "Signature scheme": a symmetric signing secret is random, at least
# 24 bytes (192 bits) and at most 64 (512 bits).
STANDARD_KEY_BYTES = (24, 64)
_SECRET_FIELDS = frozenset({"token", "shared_secret", "hmac_secret", "standard_secret"})
_HIDDEN = "**********"


def standard_key(secret: str) -> bytes:
    """The signing key inside a `whsec_` secret; ValueError saying what is wrong with it.

    The base64 may leave out its padding, as the `standardwebhooks` library allows.
    """
    if not secret.startswith(STANDARD_PREFIX):
        raise ValueError(f"must start with {STANDARD_PREFIX}")
    encoded = secret[len(STANDARD_PREFIX) :]
    try:
        key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except binascii.Error:
        raise ValueError(f"must be {STANDARD_PREFIX} followed by base64") from None
    low, high = STANDARD_KEY_BYTES
    if not low <= len(key) <= high:
        raise ValueError(
            f"must hold a key of {low} to {high} bytes after {STANDARD_PREFIX} "
            f"(this one has {len(key)}): generate one with "
            f"`echo {STANDARD_PREFIX}$(openssl rand -base64 32)`"
        )
    return key


@dataclass(frozen=True)
class SenderPolicy:
    """What a delivery must prove; built once from settings. Its repr hides every secret."""

    token: str | None = None
    shared_secret: str | None = None
    secret_header: str = "X-Webhook-Secret"
    allowed_ips: frozenset[str] = frozenset()
    trusted_proxies: frozenset[str] = frozenset()
    hmac_secret: str | None = None
    hmac_header: str = "X-Webhook-Signature"
    standard_secret: str | None = None

    @property
    def checks_sender(self) -> bool:
        """True when at least one check is on (without one, anyone can deliver)."""
        return bool(
            self.token
            or self.shared_secret
            or self.hmac_secret
            or self.standard_secret
            or self.allowed_ips
        )

    def __repr__(self) -> str:
        shown = (
            f"{f.name}={_HIDDEN!r}"
            if f.name in _SECRET_FIELDS and getattr(self, f.name) is not None
            else f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
        )
        return f"SenderPolicy({', '.join(shown)})"


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
    """401 unless the shared secret, HMAC and Standard Webhooks checks that are on pass.

    Any other exception inside a check is a 401 too: a sender that breaks a check proved nothing.
    """
    try:
        _check_body(policy, headers, body)
    except UnauthenticatedError:
        raise
    except Exception:
        raise UnauthenticatedError("webhook sender check failed") from None


def _check_body(policy: SenderPolicy, headers: Mapping[str, str], body: bytes) -> None:
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
        check_standard(policy.standard_secret, headers, body)


def well_formed_signatures(header: str) -> str:
    """The `v1,<base64>` entries of a `webhook-signature` header, space-separated.

    The library gives up at the first entry it cannot split or decode; the spec lets a sender
    list several (key rotation), and one valid entry is enough.
    """
    kept = []
    for entry in header.split(" "):
        version, comma, signature = entry.partition(",")
        if version != "v1" or not comma or "," in signature:
            continue
        try:
            base64.b64decode(signature, validate=True)
        except binascii.Error:
            continue
        kept.append(entry)
    return " ".join(kept)


@functools.lru_cache(maxsize=4)
def _standard_verifier(secret: str) -> Webhook:
    # The library holds `webhook-timestamp` to its own ±5 minutes, the spec's default.
    return Webhook(standard_key(secret))


def check_standard(secret: str, headers: Mapping[str, str], body: bytes) -> None:
    """401 unless one `webhook-signature` entry signs this id, timestamp and body."""
    try:
        presented = dict(headers)
        signatures = well_formed_signatures(presented.get("webhook-signature", ""))
        if not signatures:
            raise WebhookVerificationError("no v1 signature in webhook-signature")
        presented["webhook-signature"] = signatures
        _standard_verifier(secret).verify(body, presented, json_parse=False)
    except Exception as exc:
        # Whatever the library or a strange header throws, the sender proved nothing: 401,
        # never a 500 (the library's messages name no secret).
        raise UnauthenticatedError(f"webhook signature rejected: {exc}") from None
