"""`POST /webhook` (or `/webhook/{token}`): a thin shell over checks, parsing and ingest."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ledger.types import DeliveryOutcome, utcnow
from receiver.apply import IncomingDelivery
from receiver.auth import SenderPolicy, check_body, check_source, check_token, client_address
from receiver.body import read_limited
from receiver.errors import (
    BodyTooLargeError,
    DeliveryInvalidError,
    DeliveryRejectedError,
    IngestUnavailableError,
    ReceiverError,
    UnsupportedMediaTypeError,
)
from receiver.events import parse_event
from receiver.ingest import GroupCommitWriter
from receiver.metrics import ReceiverMetrics

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
_ARCHIVED = frozenset(ARCHIVED_HEADERS)


@dataclass(frozen=True)
class WebhookState:
    """What the webhook route needs, built once by create_app."""

    policy: SenderPolicy
    writer: GroupCommitWriter
    metrics: ReceiverMetrics
    max_body_bytes: int


def error_response(exc: ReceiverError) -> JSONResponse:
    """A clear JSON error for a receiver error."""
    body: dict[str, object] = {"status": "error", "error": exc.code, "message": exc.message}
    field = getattr(exc, "field", None)
    if field:
        body["field"] = field
    headers = {"Retry-After": "5"} if isinstance(exc, IngestUnavailableError) else None
    return JSONResponse(body, status_code=exc.status_code, headers=headers)


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


async def receive_webhook(request: Request) -> Response:
    """Authenticate, archive and apply one delivery; answer only after the commit."""
    state: WebhookState = request.app.state.webhook
    started = time.perf_counter()
    try:
        return await _receive(request, state)
    finally:
        state.metrics.ingest_seconds.observe(time.perf_counter() - started)


async def _receive(request: Request, state: WebhookState) -> Response:
    policy = state.policy
    token = request.path_params.get("token")
    if (policy.token is None) != (token is None):
        return JSONResponse({"status": "error", "error": "not_found", "message": "Not Found"}, 404)
    peer = request.client.host if request.client else None
    address = client_address(peer, request.headers.get("x-forwarded-for"), policy.trusted_proxies)
    structlog.contextvars.bind_contextvars(remote=address)
    body_checks = bool(policy.shared_secret or policy.hmac_secret or policy.standard_secret)
    try:
        check_source(policy, address)
        check_token(policy, token)
        try:
            body = await read_limited(request, state.max_body_bytes)
        except BodyTooLargeError as exc:
            if body_checks:  # unverifiable, so not authenticated: refuse without archiving
                return error_response(exc)
            return await _archive_invalid(
                request, state, address, exc.head, exc, DeliveryOutcome.TOO_LARGE
            )
        check_body(policy, request.headers, body)
    except DeliveryRejectedError as exc:
        state.metrics.auth_failures.labels(reason=exc.code).inc()
        logger.warning("webhook refused", reason=exc.message, status=exc.status_code)
        return error_response(exc)
    try:
        if not _is_json(request.headers.get("content-type", "")):
            raise UnsupportedMediaTypeError("Content-Type must be application/json")
        parsed = parse_event(body)
    except DeliveryInvalidError as exc:
        return await _archive_invalid(request, state, address, body, exc, DeliveryOutcome.INVALID)
    delivery = _incoming(request, address, body, policy)
    delivery.parsed = parsed
    try:
        applied = await state.writer.submit(delivery)
    except IngestUnavailableError as exc:
        state.metrics.deliveries.labels(outcome="unavailable").inc()
        return error_response(exc)
    state.metrics.deliveries.labels(outcome=applied.outcome.value).inc()
    structlog.contextvars.bind_contextvars(
        outcome=applied.outcome.value,
        webhook_event=parsed.event if isinstance(parsed.event, str) else parsed.event.value,
        reference=parsed.reference,
        findings=[kind.value for kind in applied.findings] or None,
    )
    return JSONResponse({"status": "ok", "outcome": _public_outcome(applied.outcome)})


def _public_outcome(outcome: DeliveryOutcome) -> str:
    # PRODUCT.md names three outcomes; a conflicting copy is not applied, so it is a duplicate
    # to the sender (the conflict is a finding for ops, not the provider's problem).
    if outcome is DeliveryOutcome.CONFLICTING:
        return DeliveryOutcome.DUPLICATE.value
    return outcome.value


def _incoming(
    request: Request, address: str | None, body: bytes, policy: SenderPolicy
) -> IncomingDelivery:
    # One pass over the raw headers (a lookup per name would rescan them each time).
    headers = {
        name: value[:500] for name, value in request.headers.items() if name in _ARCHIVED
    }
    webhook_id = request.headers.get("webhook-id") if policy.standard_secret else None
    return IncomingDelivery(
        received_at=utcnow(),
        remote_addr=address,
        headers=headers,
        body=body,
        body_sha256=hashlib.sha256(body).hexdigest(),
        size=len(body),
        webhook_id=webhook_id[:200] if webhook_id else None,
    )


async def _archive_invalid(
    request: Request,
    state: WebhookState,
    address: str | None,
    body: bytes,
    exc: DeliveryInvalidError,
    outcome: DeliveryOutcome,
) -> Response:
    delivery = _incoming(request, address, body, state.policy)
    delivery.error = f"{exc.code}: {exc.message}"
    delivery.invalid_outcome = outcome
    try:
        await state.writer.submit(delivery)
    except IngestUnavailableError as unavailable:
        # Not archived: ask the sender to try again rather than drop the evidence.
        return error_response(unavailable)
    state.metrics.deliveries.labels(outcome=outcome.value).inc()
    structlog.contextvars.bind_contextvars(outcome=outcome.value, error=exc.code)
    return error_response(exc)
