"""`POST /webhook` (or `/webhook/{token}`): a bare ASGI endpoint over checks, parsing and ingest.

It is the hot path, so it skips Starlette's routing, Request and Response objects and the
request-log middleware, and does their work itself: the answers are the same bytes, and it
writes the same canonical log line (PRODUCT.md: Receiver HTTP interface).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any

import structlog
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope, Send

from ledger.types import DeliveryOutcome, utcnow
from receiver.answers import NOT_ALLOWED, NOT_FOUND, SUCCESS, Answer, error_answer
from receiver.apply import IncomingDelivery
from receiver.auth import SenderPolicy, check_body, check_source, check_token, client_address
from receiver.body import BodyDeadline, check_declared
from receiver.errors import (
    BodyTimeoutError,
    BodyTooLargeError,
    DeliveryInvalidError,
    DeliveryRejectedError,
    IngestUnavailableError,
    UnsupportedMediaTypeError,
)
from receiver.events import ParsedEvent, parse_event
from receiver.ingest import GroupCommitWriter
from receiver.metrics import ReceiverMetrics
from receiver.requestlog import LineLogger, loggable_path, request_id_of

logger = structlog.get_logger(__name__)

# Headers worth keeping with the raw body; the shared-secret header is never stored.
ARCHIVED_HEADERS = (
    "content-type",
    "content-length",
    "user-agent",
    "x-forwarded-for",
    "x-request-id",
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
)
_ARCHIVED = frozenset(name.encode() for name in ARCHIVED_HEADERS)

RawHeaders = dict[bytes, bytes]

# The status logged for a sender that closed the connection before its body arrived.
CLIENT_CLOSED = 499


@dataclass(frozen=True)
class WebhookState:
    """What the webhook route needs, built once by create_app."""

    policy: SenderPolicy
    writer: GroupCommitWriter
    metrics: ReceiverMetrics
    max_body_bytes: int
    body_timeout: float


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")


def _forwarded_for(raw: list[tuple[bytes, bytes]]) -> str:
    # Every X-Forwarded-For line, in order, as one list: a proxy may append a line of its own
    # instead of extending the sender's (HAProxy's `option forwardfor`), and the walk from the
    # right must see that line (PRODUCT.md: Robustness rules).
    return ",".join(value.decode("latin-1") for name, value in raw if name == b"x-forwarded-for")


def _is_json(content_type: bytes | None) -> bool:
    if content_type == b"application/json":
        return True
    media = (_text(content_type) or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def _webhook_event(parsed: ParsedEvent) -> str:
    return parsed.event if isinstance(parsed.event, str) else parsed.event.value


class WebhookEndpoint:
    """The ASGI app of the webhook paths; the path token, if any, is in `scope["path_params"]`.

    Authenticate, archive and apply one delivery; answer only after the commit.
    """

    def __init__(self, state: WebhookState) -> None:
        self.state = state
        self.line_logger = LineLogger()
        self.body_deadline = BodyDeadline(state.body_timeout)
        policy = state.policy
        self.body_checks = bool(
            policy.shared_secret or policy.hmac_secret or policy.standard_secret
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        raw = scope["headers"]
        # Of repeated headers, checks see the first (as with Starlette's Headers); the archive
        # and the request id keep the last, as they always have. X-Forwarded-For is the
        # exception: all its lines are joined, for both.
        headers: RawHeaders = dict(reversed(raw))
        archived = {
            name.decode("latin-1"): value.decode("latin-1")[:500]
            for name, value in raw
            if name in _ARCHIVED
        }
        if b"x-forwarded-for" in headers:
            forwarded = _forwarded_for(raw)
            headers[b"x-forwarded-for"] = forwarded.encode("latin-1")
            archived["x-forwarded-for"] = forwarded[:500]
        request_id = request_id_of(archived.get("x-request-id"))
        # What structlog's contextvars would carry: every line logged for this request gets it.
        bound: dict[str, Any] = {"request_id": request_id}
        status = 500  # logged if an error escapes; Starlette's error middleware answers 500
        try:
            if scope["method"] == "POST":
                try:
                    answer = await self._deliver(scope, receive, headers, archived, bound)
                except ClientDisconnect:
                    # The sender went away mid-body: nothing was archived and there is no one
                    # to answer. Logged as nginx does (499), not as a server error.
                    status = CLIENT_CLOSED
                    return
                finally:
                    self.state.metrics.ingest_seconds.observe(time.perf_counter() - started)
            else:
                answer = NOT_ALLOWED
            status = answer.status
            await answer.send(send, request_id)
        finally:
            self.line_logger.get().info(
                "request",
                method=scope["method"],
                path=loggable_path(scope["path"]),
                status=status,
                duration_ms=round((time.perf_counter() - started) * 1000, 2),
                **bound,
            )

    async def _deliver(
        self,
        scope: Scope,
        receive: Receive,
        headers: RawHeaders,
        archived: dict[str, str],
        bound: dict[str, Any],
    ) -> Answer:
        state = self.state
        policy = state.policy
        token: str | None = scope["path_params"].get("token")
        if (policy.token is None) != (token is None):
            return NOT_FOUND
        client = scope.get("client")
        address = client_address(
            client[0] if client else None,
            _text(headers.get(b"x-forwarded-for")),
            policy.trusted_proxies,
        )
        bound["remote"] = address
        body_checks = self.body_checks
        try:
            check_source(policy, address)
            check_token(policy, token)
            try:
                check_declared(_text(headers.get(b"content-length")), state.max_body_bytes)
                body = await self.body_deadline.receive(receive, state.max_body_bytes)
            except BodyTimeoutError as exc:
                # A stalled or trickling sender: not stored (it may never finish), and the
                # connection is closed with the answer so the rest of the body is not awaited.
                logger.warning("webhook body timed out", reason=exc.message, **bound)
                return error_answer(exc)
            except BodyTooLargeError as exc:
                if body_checks:  # unverifiable, so not authenticated: refuse without archiving
                    return error_answer(exc)
                return await self._archive_invalid(
                    headers, archived, address, exc.head, exc, DeliveryOutcome.TOO_LARGE, bound
                )
            if body_checks:
                text_headers = {
                    k.decode("latin-1"): v.decode("latin-1") for k, v in headers.items()
                }
                check_body(policy, text_headers, body)
        except DeliveryRejectedError as exc:
            state.metrics.refused(exc.code)
            logger.warning("webhook refused", reason=exc.message, status=exc.status_code, **bound)
            return error_answer(exc)
        try:
            if not _is_json(headers.get(b"content-type")):
                raise UnsupportedMediaTypeError("Content-Type must be application/json")
            parsed = parse_event(body)
        except DeliveryInvalidError as exc:
            return await self._archive_invalid(
                headers, archived, address, body, exc, DeliveryOutcome.INVALID, bound
            )
        delivery = self._incoming(headers, archived, address, body)
        delivery.parsed = parsed
        try:
            applied = await state.writer.submit(delivery)
        except IngestUnavailableError as exc:
            state.metrics.delivered("unavailable")
            return error_answer(exc)
        outcome = applied.outcome
        state.metrics.delivered(outcome.value)
        bound["outcome"] = outcome.value
        bound["webhook_event"] = _webhook_event(parsed)
        bound["reference"] = parsed.reference
        bound["findings"] = [kind.value for kind in applied.findings] if applied.findings else None
        return SUCCESS[outcome]

    def _incoming(
        self, headers: RawHeaders, archived: dict[str, str], address: str | None, body: bytes
    ) -> IncomingDelivery:
        webhook_id = (
            _text(headers.get(b"webhook-id")) if self.state.policy.standard_secret else None
        )
        return IncomingDelivery(
            received_at=utcnow(),
            remote_addr=address,
            headers=archived,
            body=body,
            body_sha256=hashlib.sha256(body).hexdigest(),
            size=len(body),
            webhook_id=webhook_id[:200] if webhook_id else None,
        )

    async def _archive_invalid(
        self,
        headers: RawHeaders,
        archived: dict[str, str],
        address: str | None,
        body: bytes,
        exc: DeliveryInvalidError,
        outcome: DeliveryOutcome,
        bound: dict[str, Any],
    ) -> Answer:
        delivery = self._incoming(headers, archived, address, body)
        delivery.error = f"{exc.code}: {exc.message}"
        delivery.invalid_outcome = outcome
        try:
            await self.state.writer.submit(delivery)
        except IngestUnavailableError as unavailable:
            # Not archived: ask the sender to try again rather than drop the evidence.
            return error_answer(unavailable)
        self.state.metrics.delivered(outcome.value)
        bound["outcome"] = outcome.value
        bound["error"] = exc.code
        return error_answer(exc)
