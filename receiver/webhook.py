"""`POST /webhook` (or `/webhook/{token}`): a bare ASGI endpoint over checks, parsing and ingest.

It is the hot path, so it skips Starlette's routing, Request and Response objects and the
request-log middleware, and does their work itself: the answers are the same bytes, and it
writes the same canonical log line (receiver/fastpath.py says what that buys; docs/rules.md:
Receiver HTTP interface).
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
from receiver.apply import Applied, IncomingDelivery
from receiver.auth import SenderPolicy, check_body, check_source, check_token
from receiver.errors import (
    BodyTimeoutError,
    BodyTooLargeError,
    DeliveryInvalidError,
    DeliveryRejectedError,
    IngestUnavailableError,
    UnsupportedMediaTypeError,
    from_web,
)
from receiver.events import ParsedEvent, parse_event
from receiver.fastpath import (
    NOT_ALLOWED,
    NOT_FOUND,
    SUCCESS,
    LineLogger,
    PreparedResponse,
    error_answer,
)
from receiver.ingest import GroupCommitWriter
from receiver.metrics import ReceiverMetrics
from receiver.requestlog import request_id_of
from web import errors as web_errors
from web.address import client_address, forwarded_for
from web.body import BodyDeadline, check_declared

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
    """What the webhook route needs, built once per app (`receiver.app.webhook_state`)."""

    policy: SenderPolicy
    writer: GroupCommitWriter
    metrics: ReceiverMetrics
    max_body_bytes: int
    body_timeout: float


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")


def _is_json(content_type: bytes | None) -> bool:
    if content_type == b"application/json":
        return True
    media = (_text(content_type) or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def _webhook_event(parsed: ParsedEvent) -> str:
    return parsed.event if isinstance(parsed.event, str) else parsed.event.value


def _parsed(headers: RawHeaders, body: bytes) -> ParsedEvent:
    # DeliveryInvalidError (415, 400 or 422) for a body that cannot be applied.
    if not _is_json(headers.get(b"content-type")):
        raise UnsupportedMediaTypeError("Content-Type must be application/json")
    return parse_event(body)


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
        # and the request id keep the last, the rule every archived delivery was stored under.
        # X-Forwarded-For is the exception: all its lines are joined, for both.
        headers: RawHeaders = dict(reversed(raw))
        archived = {
            name.decode("latin-1"): value.decode("latin-1")[:500]
            for name, value in raw
            if name in _ARCHIVED
        }
        if b"x-forwarded-for" in headers:
            # The same joining as every other route (web.address).
            forwarded = forwarded_for(raw) or ""
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
            self.line_logger.line(scope, status, started, bound)

    async def _deliver(
        self,
        scope: Scope,
        receive: Receive,
        headers: RawHeaders,
        archived: dict[str, str],
        bound: dict[str, Any],
    ) -> PreparedResponse:
        """Check the sender, read and parse the body, apply it: the answer to send."""
        token: str | None = scope["path_params"].get("token")
        if (self.state.policy.token is None) != (token is None):
            return NOT_FOUND
        address = self._address(scope, headers)
        bound["remote"] = address
        try:
            # Cheapest first: nothing is read from a sender the headers already refuse.
            self._check_sender(headers, address, token)
            try:
                body = await self.body_deadline.receive(receive, self.state.max_body_bytes)
            except web_errors.WebError as exc:
                raise from_web(exc) from None
            if self.body_checks:
                self._check_body(headers, body)
        except DeliveryRejectedError as exc:
            return self._refused(exc, bound)
        except BodyTooLargeError as exc:
            if self.body_checks:  # unverifiable, so not authenticated: refuse without archiving
                return error_answer(exc)
            return await self._archive_invalid(
                headers, archived, address, exc.head, exc, DeliveryOutcome.TOO_LARGE, bound
            )
        try:
            parsed = _parsed(headers, body)
        except DeliveryInvalidError as exc:
            return await self._archive_invalid(
                headers, archived, address, body, exc, DeliveryOutcome.INVALID, bound
            )
        delivery = self._incoming(headers, archived, address, body)
        delivery.parsed = parsed
        try:
            applied = await self.state.writer.submit(delivery)
        except IngestUnavailableError as exc:
            self.state.metrics.delivered("unavailable")
            return error_answer(exc)
        return self._applied(applied, parsed, bound)

    def _address(self, scope: Scope, headers: RawHeaders) -> str | None:
        # The sender's address, believing X-Forwarded-For only from a trusted proxy.
        client = scope.get("client")
        return client_address(
            client[0] if client else None,
            _text(headers.get(b"x-forwarded-for")),
            self.state.policy.trusted_proxies,
        )

    def _check_sender(self, headers: RawHeaders, address: str | None, token: str | None) -> None:
        # The checks that need no body, before it is read: address, path token, declared size.
        state = self.state
        check_source(state.policy, address)
        check_token(state.policy, token)
        try:
            check_declared(_text(headers.get(b"content-length")), state.max_body_bytes)
        except web_errors.WebError as exc:
            raise from_web(exc) from None

    def _check_body(self, headers: RawHeaders, body: bytes) -> None:
        # Shared secret, HMAC and Standard Webhooks signature, over the raw body.
        text_headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in headers.items()}
        check_body(self.state.policy, text_headers, body)

    def _refused(self, exc: DeliveryRejectedError, bound: dict[str, Any]) -> PreparedResponse:
        # Nothing is archived for a refused delivery: it is logged, and counted unless only
        # its body was slow.
        if isinstance(exc, BodyTimeoutError):
            # A stalled or trickling sender: not stored (it may never finish), and the
            # connection is closed with the answer so the rest of the body is not awaited.
            logger.warning("webhook body timed out", reason=exc.message, **bound)
        else:
            self.state.metrics.refused(exc.code)
            logger.warning("webhook refused", reason=exc.message, status=exc.status_code, **bound)
        return error_answer(exc)

    def _applied(
        self, applied: Applied, parsed: ParsedEvent, bound: dict[str, Any]
    ) -> PreparedResponse:
        # Count the outcome and tell the log line about it; the 200 for that outcome.
        outcome = applied.outcome
        self.state.metrics.delivered(outcome.value)
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
            # Read by the batch only while tracing is on: one lookup here, nothing parsed.
            traceparent=headers.get(b"traceparent"),
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
    ) -> PreparedResponse:
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
