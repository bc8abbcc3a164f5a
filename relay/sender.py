"""Send one signed attempt and say what came of it: the middle step of claim → send → record.

One `httpx.AsyncClient` per worker (one connection pool), explicit timeouts, no redirects.
Nothing a consumer does can raise out of `send` or hold it past the timeout: a hang, a
redirect, a 100 MB body (only its first KiB is read), a port that does not speak HTTP, a TLS
error, a name that does not resolve, a host that resolves to the host's own addresses
(relay.connect) — each is an Answer with an error or a status code.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time

import httpx
import structlog

from relay import signing
from relay.addresses import Network
from relay.attempts import RETRY_AFTER_STATUSES, Answer
from relay.claims import Job
from relay.connect import CheckedTransport
from relay.endpoints import signing_secrets
from relay.errors import DestinationRefusedError, RelayError
from relay.keys import SecretBox
from relay.schedule import parse_retry_after

logger = structlog.get_logger(__name__)

# The most of an answer's body kept with the attempt (and read from the network).
HEAD_BYTES = 1024
MAX_ERROR = 500


def make_client(
    *, timeout: float, concurrency: int, allow: tuple[Network, ...] = ()
) -> httpx.AsyncClient:
    """The worker's one client: a pool sized to its concurrency, redirects never followed, and
    connections only to addresses relay.connect accepts (`allow`: PAYRECON_RELAY_ALLOW_NETWORKS)."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout),
        follow_redirects=False,
        transport=CheckedTransport(allow=allow, limits=limits),
    )


def _text(raw: bytes | str, limit: int) -> str:
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    # PostgreSQL's text holds no NUL.
    return text[:limit].replace("\x00", "\ufffd")


def _error(exc: BaseException) -> str:
    detail = str(exc).strip()
    name = type(exc).__name__
    return _text(f"{name}: {detail}" if detail else name, MAX_ERROR)


async def _post(
    client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str], now: dt.datetime
) -> tuple[int, str, float | None]:
    async with client.stream("POST", url, content=body, headers=headers) as response:
        head = b""
        async for chunk in response.aiter_raw():
            head += chunk
            if len(head) >= HEAD_BYTES:
                break  # the rest is never read: the connection is closed, not drained
        retry_after = None
        if response.status_code in RETRY_AFTER_STATUSES:
            retry_after = parse_retry_after(response.headers.get("retry-after"), now)
        return response.status_code, _text(head[:HEAD_BYTES], HEAD_BYTES), retry_after


async def send(client: httpx.AsyncClient, job: Job, box: SecretBox, *, timeout: float) -> Answer:
    """POST the job's event, signed for its endpoint; what came of it (never raises)."""
    attempted_at = dt.datetime.now(dt.UTC)
    started = time.monotonic()

    def answer(
        status_code: int | None = None,
        error: str | None = None,
        head: str | None = None,
        retry_after: float | None = None,
    ) -> Answer:
        duration = int((time.monotonic() - started) * 1000)
        return Answer(attempted_at, duration, status_code, error, head, retry_after)

    try:
        secrets = signing_secrets(job.endpoint, box, now=attempted_at)
        headers = signing.headers(secrets, job.event_id, int(attempted_at.timestamp()), job.body)
    except RelayError as exc:
        # Never send unsigned: an endpoint whose secret cannot be opened gets no request.
        return answer(error=_text(f"not signed: {exc}", MAX_ERROR))
    try:
        # httpx's timeout bounds each phase; this bounds the whole attempt (a slow drip).
        async with asyncio.timeout(timeout):
            status, head, retry_after = await _post(
                client, job.endpoint.url, job.body.encode(), headers, attempted_at
            )
    except TimeoutError:
        return answer(error=f"no answer within {timeout:g} s")
    except DestinationRefusedError as exc:
        return answer(error=_text(str(exc), MAX_ERROR))
    except (httpx.HTTPError, OSError, ValueError) as exc:
        return answer(error=_error(exc))
    except Exception as exc:  # a consumer must never crash the worker
        logger.warning("relay_send_unexpected", error=_error(exc), delivery_id=job.delivery_id)
        return answer(error=_error(exc))
    return answer(status_code=status, head=head or None, retry_after=retry_after)
