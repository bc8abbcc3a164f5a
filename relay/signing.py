"""Standard Webhooks headers for one attempt, signed with the `standardwebhooks` library."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from functools import cache
from importlib.metadata import version

from standardwebhooks.webhooks import Webhook

from relay.claims import Job
from relay.endpoints import signing_secrets
from relay.keys import SecretBox


@cache
def user_agent() -> str:
    """`payrecon/VERSION`, the User-Agent of every attempt."""
    return f"payrecon/{version('payrecon')}"


def signature(secrets: Sequence[str], event_id: str, timestamp: int, body: str) -> str:
    """The `webhook-signature` value: `v1,<base64>` for each secret, space-separated (two
    during a rotation, so a consumer with either secret verifies)."""
    when = dt.datetime.fromtimestamp(timestamp, tz=dt.UTC)
    return " ".join(Webhook(secret).sign(event_id, when, body) for secret in secrets)


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
