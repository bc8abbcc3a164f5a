"""HTTP endpoints: one signed POST per attempt (docs/rules.md: Relay).

One `httpx.AsyncClient` per worker (one connection pool), explicit timeouts, no redirects.
Nothing a consumer does can raise out of `send` or hold it past the timeout: a hang, a
redirect, a 100 MB body (only its first KiB is read), a port that does not speak HTTP, a TLS
error, a name that does not resolve, a host that resolves to the host's own addresses
(relay.connect) — each is an Outcome with an error or a status code.
"""

from __future__ import annotations

import asyncio
import datetime as dt

import httpx
import structlog

from relay import signing
from relay.addresses import Network
from relay.claims import Job
from relay.connect import CheckedTransport
from relay.errors import DestinationRefusedError, RelayError
from relay.keys import SecretBox
from relay.schedule import parse_retry_after
from relay.transport import MAX_ERROR, RETRY_AFTER_STATUSES, Clock, Outcome, error_text, text

logger = structlog.get_logger(__name__)

# The most of an answer's body kept with the attempt (and read from the network).
HEAD_BYTES = 1024


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
        return response.status_code, text(head[:HEAD_BYTES], HEAD_BYTES), retry_after


class HttpTransport:
    """POSTs each job's event, signed for its endpoint, on the worker's one client."""

    def __init__(
        self, box: SecretBox, *, timeout: float, concurrency: int, allow: tuple[Network, ...]
    ) -> None:
        self.box = box
        self.timeout = timeout
        self.client = make_client(timeout=timeout, concurrency=concurrency, allow=allow)

    async def send(self, job: Job) -> Outcome:
        """POST the job's event; what came of it (never raises)."""
        clock = Clock()
        try:
            headers = signing.job_headers(job, self.box, clock.attempted_at)
        except RelayError as exc:
            # Never send unsigned: an endpoint whose secret cannot be opened gets no request.
            return clock.outcome(error=text(f"not signed: {exc}", MAX_ERROR))
        try:
            # httpx's timeout bounds each phase; this bounds the whole attempt (a slow drip).
            async with asyncio.timeout(self.timeout):
                status, head, retry_after = await _post(
                    self.client, job.endpoint.url, job.body.encode(), headers, clock.attempted_at
                )
        except TimeoutError:
            return clock.outcome(error=f"no answer within {self.timeout:g} s")
        except DestinationRefusedError as exc:
            return clock.outcome(error=text(str(exc), MAX_ERROR))
        except (httpx.HTTPError, OSError, ValueError) as exc:
            return clock.outcome(error=error_text(exc))
        except Exception as exc:  # a consumer must never crash the worker
            logger.warning(
                "relay_send_unexpected", error=error_text(exc), delivery_id=job.delivery_id
            )
            return clock.outcome(error=error_text(exc))
        return clock.outcome(status_code=status, head=head or None, retry_after=retry_after)

    async def aclose(self) -> None:
        """Close the client's connections."""
        await self.client.aclose()
