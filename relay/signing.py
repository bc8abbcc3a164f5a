"""Standard Webhooks headers for one attempt.

The signature is the scheme's own formula (HMAC-SHA256 of `id.timestamp.body` under the
secret's base64-decoded key, `v1,` and base64), computed with `hmac.digest` and the key
decoded once per secret: the `standardwebhooks` library's `Webhook(secret).sign` gives the
same text (tests/unit/relay verify it, and every consumer test verifies with the library) at
twice the cost, which was a tenth of a fast broker's attempt (bench/RESULTS.md section 15).
"""

from __future__ import annotations

import base64
import datetime as dt
import hmac
from collections.abc import Sequence
from functools import cache, lru_cache
from importlib.metadata import version

from relay.claims import Job
from relay.endpoints import signing_secrets
from relay.keys import SecretBox


@cache
def user_agent() -> str:
    """`payrecon/VERSION`, the User-Agent of every attempt."""
    return f"payrecon/{version('payrecon')}"


@lru_cache(maxsize=256)
def _key(secret: str) -> bytes:
    # `whsec_` and the base64 of the key, as the library reads it.
    return base64.b64decode(secret.removeprefix("whsec_"))


def signature(secrets: Sequence[str], event_id: str, timestamp: int, body: str) -> str:
    """The `webhook-signature` value: `v1,<base64>` for each secret, space-separated (two
    during a rotation, so a consumer with either secret verifies)."""
    signed = f"{event_id}.{timestamp}.{body}".encode()
    return " ".join(
        "v1," + base64.b64encode(hmac.digest(_key(secret), signed, "sha256")).decode()
        for secret in secrets
    )


def headers(secrets: Sequence[str], event_id: str, timestamp: int, body: str) -> dict[str, str]:
    """Every header of an attempt (docs/rules.md: Relay)."""
    return {
        "webhook-id": event_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secrets, event_id, timestamp, body),
        "content-type": "application/json",
        "user-agent": user_agent(),
    }


def job_headers(job: Job, box: SecretBox, attempted_at: dt.datetime) -> dict[str, str]:
    """The headers of an attempt at `job` now, signed with its endpoint's secrets; a RelayError
    (relay.errors) when they cannot be opened: nothing is ever sent unsigned."""
    secrets = signing_secrets(job.endpoint, box, now=attempted_at)
    return headers(secrets, job.event_id, int(attempted_at.timestamp()), job.body)
