"""SandboxConfig: everything one emulator instance is started with."""

from __future__ import annotations

import base64
import binascii
import math
import re
import secrets
from dataclasses import dataclass, field, replace

from sandbox.errors import ConfigError
from sandbox.faults import Faults

ENVIRONMENTS = ("sandbox", "production")
_KEY_TAG = {"sandbox": "test", "production": "live"}
_OTP = re.compile(r"[0-9]{6}")
# The spec fixes only the prefix (Authentication 2); the rest is any visible ASCII that an
# Authorization header can carry, at least one character so a bare prefix (an unset shell
# variable after it) is caught.
_KEY_BODY = re.compile(r"[!-~]{1,200}")


def key_prefixes(environment: str) -> tuple[str, str]:
    """The (secret, public) key prefixes of an environment: `sk_test_`/`pk_test_` or live."""
    tag = _KEY_TAG[environment]
    return f"sk_{tag}_", f"pk_{tag}_"


def other_environment(environment: str) -> str:
    """The environment this one is not."""
    return "production" if environment == "sandbox" else "sandbox"


def new_key(prefix: str) -> str:
    """A fresh random key with this prefix."""
    return prefix + secrets.token_hex(16)


def new_otp() -> str:
    """A fresh random six-digit two-factor code."""
    return f"{secrets.randbelow(1_000_000):06d}"


@dataclass(frozen=True)
class SandboxConfig:
    """One emulator's settings; keys and otp left empty are generated at construction.

    `complete_after` None means transfers stay pending until forced.
    `webhook_retry_delays` are the waits before attempts 2, 3, …; a delivery
    makes at most len(delays) + 1 attempts.
    """

    environment: str = "sandbox"
    secret_key: str = field(default="", repr=False)
    public_key: str = field(default="", repr=False)
    other_secret_key: str = field(default="", repr=False)
    other_public_key: str = field(default="", repr=False)
    expired_keys: tuple[str, ...] = field(default=(), repr=False)
    otp: str = field(default="", repr=False)
    complete_after: float | None = 1.0
    wallet_balance: int = 10_000_000_000
    webhook_url: str | None = None
    webhook_retry_delays: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 16.0)
    webhook_timeout: float = 10.0
    webhook_concurrency: int = 16
    webhook_secret: str | None = field(default=None, repr=False)
    webhook_hmac_secret: str | None = field(default=None, repr=False)
    webhook_standard_secret: str | None = field(default=None, repr=False)
    reorder_max_hold: float = 5.0
    collection_ttl: float = 1800.0
    seed: int | None = None
    faults: Faults = field(default_factory=Faults)
    trust_forwarded_for: bool = False
    host: str = "127.0.0.1"
    port: int = 8100

    def __post_init__(self) -> None:
        if self.environment not in ENVIRONMENTS:
            raise ConfigError(
                f"environment must be one of {', '.join(ENVIRONMENTS)}", field="environment"
            )
        secret_prefix, public_prefix = key_prefixes(self.environment)
        other_secret, other_public = key_prefixes(other_environment(self.environment))
        defaults = {
            "secret_key": secret_prefix,
            "public_key": public_prefix,
            "other_secret_key": other_secret,
            "other_public_key": other_public,
        }
        for name, prefix in defaults.items():
            value = getattr(self, name)
            if not value:
                # Frozen: generated keys are filled in once, here, never later.
                object.__setattr__(self, name, new_key(prefix))
            elif not value.startswith(prefix) or not _KEY_BODY.fullmatch(value[len(prefix) :]):
                raise ConfigError(
                    f"{name.replace('_', ' ')} must be {prefix} followed by at least one "
                    f"visible character (no spaces) for the {self.environment} environment",
                    field=name,
                )
        if not self.otp:
            object.__setattr__(self, "otp", new_otp())
        elif not _OTP.fullmatch(self.otp):
            raise ConfigError("otp must be exactly 6 digits", field="otp")
        self._check_numbers()
        if self.webhook_standard_secret is not None:
            standard_secret_key(self.webhook_standard_secret)

    def _check_numbers(self) -> None:
        if self.complete_after is not None and not (
            math.isfinite(self.complete_after) and self.complete_after >= 0
        ):
            raise ConfigError(
                "complete-after must be seconds >= 0 or 'never'", field="complete_after"
            )
        if isinstance(self.wallet_balance, bool) or not 0 <= self.wallet_balance < 2**63:
            raise ConfigError("wallet must be kobo between 0 and 2^63-1", field="wallet_balance")
        if any(not (math.isfinite(d) and d >= 0) for d in self.webhook_retry_delays):
            raise ConfigError("webhook retry delays must be seconds >= 0", field="retry")
        if self.webhook_concurrency < 1:
            raise ConfigError("webhook concurrency must be >= 1", field="webhook_concurrency")
        if not 0 < self.port < 65536:
            raise ConfigError("port must be between 1 and 65535", field="port")

    def with_changes(self, **changes: object) -> SandboxConfig:
        """A copy with some fields replaced (validated again)."""
        return replace(self, **changes)  # type: ignore[arg-type]


def standard_secret_key(secret: str) -> bytes:
    """The signing key inside a Standard Webhooks `whsec_…` secret."""
    if not secret.startswith("whsec_"):
        raise ConfigError("webhook standard secret must start with whsec_", field="standard")
    try:
        key = base64.b64decode(secret[len("whsec_") :], validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(
            "webhook standard secret must be whsec_ followed by base64", field="standard"
        ) from None
    if not key:
        raise ConfigError("webhook standard secret is empty", field="standard")
    return key
