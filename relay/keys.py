"""Endpoint secrets: made here, and sealed with PAYRECON_RELAY_KEYS before they reach the ledger.

A copy of the database alone cannot sign events as payrecon: every `whsec_` secret is stored
encrypted (Fernet: AES-128-CBC with HMAC-SHA256) under a key that lives only in the settings.
Several keys may be given, comma-separated: the first seals, any of them opens, so a key is
rotated by putting a new one first and dropping the old one once every secret was re-sealed.
"""

from __future__ import annotations

import base64
import hashlib
import secrets

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from relay.errors import SecretKeyError

# Bytes of a new endpoint secret: 32, inside the 24-64 the Standard Webhooks spec allows.
SECRET_BYTES = 32
SECRET_PREFIX = "whsec_"
MIN_KEY_LENGTH = 32


def new_secret() -> str:
    """A fresh `whsec_` secret for an endpoint."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def check_keys(value: str) -> list[str]:
    """The keys of a PAYRECON_RELAY_KEYS value; ValueError when one is shorter than
    MIN_KEY_LENGTH characters (a key is any random string, e.g. `secrets.token_urlsafe(32)`)."""
    keys = [part.strip() for part in value.split(",") if part.strip()]
    if not keys:
        raise ValueError("holds no key")
    for key in keys:
        if len(key) < MIN_KEY_LENGTH:
            raise ValueError(
                f"each key must be at least {MIN_KEY_LENGTH} characters "
                "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )
    return keys


# Opened secrets a box keeps (two per endpoint during a rotation).
_OPENED_MAX = 1024


class SecretBox:
    """Seals and opens endpoint secrets with the configured keys (the first one seals)."""

    __slots__ = ("_fernet", "_opened")

    def __init__(self, keys: list[str]) -> None:
        if not keys:
            raise SecretKeyError(
                "PAYRECON_RELAY_KEYS is not set: endpoints' secrets are stored encrypted with it "
                "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )
        # Any string works as a key: it is stretched to Fernet's 32 bytes by SHA-256.
        self._fernet = MultiFernet(
            [Fernet(base64.urlsafe_b64encode(hashlib.sha256(k.encode()).digest())) for k in keys]
        )
        # Opened secrets by sealed value: the worker signs every attempt, and a Fernet
        # decryption per attempt was a few per cent of its time (bench/RESULTS.md, section 5).
        self._opened: dict[str, str] = {}

    def __repr__(self) -> str:
        return "SecretBox(keys=***)"

    def seal(self, secret: str) -> str:
        """The secret encrypted under the first key."""
        return self._fernet.encrypt(secret.encode()).decode()

    def open(self, sealed: str) -> str:
        """The secret a `seal` made; SecretKeyError when no configured key opens it."""
        opened = self._opened.get(sealed)
        if opened is not None:
            return opened
        try:
            opened = self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            raise SecretKeyError(
                "no key in PAYRECON_RELAY_KEYS opens this endpoint's secret "
                "(was the key that sealed it removed?)"
            ) from None
        if len(self._opened) >= _OPENED_MAX:
            self._opened.clear()
        self._opened[sealed] = opened
        return opened

    def reseal(self, sealed: str) -> str:
        """The secret sealed again under the first key (after a key rotation)."""
        try:
            return self._fernet.rotate(sealed.encode()).decode()
        except InvalidToken:
            raise SecretKeyError(
                "no key in PAYRECON_RELAY_KEYS opens this endpoint's secret"
            ) from None
