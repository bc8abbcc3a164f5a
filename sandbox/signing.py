"""Optional webhook signing headers (off by default; the spec shows no signature)."""

from __future__ import annotations

import base64
import hashlib
import hmac

from sandbox.config import SandboxConfig, standard_secret_key


def signing_headers(
    config: SandboxConfig, body: bytes, *, message_id: str, timestamp: int
) -> dict[str, str]:
    """Headers that authenticate one delivery, per the configured secrets.

    * `X-Webhook-Secret: S` — a shared secret;
    * `X-Webhook-Signature: hex(HMAC-SHA512(S, body))`;
    * Standard Webhooks: `webhook-id`, `webhook-timestamp`,
      `webhook-signature: v1,base64(HMAC-SHA256(key, "id.timestamp.body"))`.
    """
    headers: dict[str, str] = {}
    if config.webhook_secret:
        headers["X-Webhook-Secret"] = config.webhook_secret
    if config.webhook_hmac_secret:
        digest = hmac.new(config.webhook_hmac_secret.encode(), body, hashlib.sha512)
        headers["X-Webhook-Signature"] = digest.hexdigest()
    if config.webhook_standard_secret:
        key = standard_secret_key(config.webhook_standard_secret)
        signed = f"{message_id}.{timestamp}.".encode() + body
        signature = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        headers["webhook-id"] = message_id
        headers["webhook-timestamp"] = str(timestamp)
        headers["webhook-signature"] = f"v1,{signature}"
    return headers
