"""What the receiver reads from settings, as a Protocol (payrecon's Settings satisfies it).

The receiver sits below the composition root, so it names the settings it needs here instead
of importing `payrecon.settings`.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import SecretStr


class ReceiverSettings(Protocol):
    """The settings the webhook endpoint is built from (`webhook_state`, `sender_policy`)."""

    @property
    def batch_max(self) -> int: ...
    @property
    def max_body_bytes(self) -> int: ...
    @property
    def body_timeout(self) -> float: ...
    @property
    def webhook_token(self) -> SecretStr | None: ...
    @property
    def webhook_secret(self) -> SecretStr | None: ...
    @property
    def webhook_secret_header(self) -> str: ...
    @property
    def webhook_allowed_ips(self) -> list[str]: ...
    @property
    def trusted_proxies(self) -> list[str]: ...
    @property
    def webhook_hmac_secret(self) -> SecretStr | None: ...
    @property
    def webhook_hmac_header(self) -> str: ...
    @property
    def webhook_standard_secret(self) -> SecretStr | None: ...
