"""The relay's admin API under `/api`: endpoints, events, and retrying a delivery.

Handlers check the input, run one function of `relay/` in a worker thread and answer; the
queries live in `relay/queries.py` and the endpoint operations in `relay/endpoints.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from admin.api import (
    json_body,
    query_cursor,
    query_limit,
    query_since,
)
from admin.errors import EndpointBodyError, QueryError
from admin.identity import Role, audit, current_operator
from admin.unavailable import DATABASE_ERRORS, database_unavailable
from ledger.audit import AuditAction
from ledger.db import read_session, write_session
from ledger.events.types import RelayEventType
from ledger.types import takes_text, utcnow
from relay import endpoints, queries
from relay.addresses import Network
from relay.errors import (
    DeliveryStateError,
    EndpointAddressError,
    EndpointInputError,
    EndpointNotFoundError,
    RotationError,
    SecretKeyError,
)
from relay.keys import SecretBox
from relay.queries import (
    EventQuery,
    endpoint_record,
    endpoint_records,
    event_record,
    list_events,
    parse_event_cursor,
    parse_row_id,
    parse_subject,
    pending_counts,
)
from web.answers import json_error

T = TypeVar("T")
# The fields a body may hold: POST takes the first three, PATCH all four.
CREATE_FIELDS = frozenset({"url", "events", "description"})
PATCH_FIELDS = CREATE_FIELDS | {"enabled"}


@dataclass(frozen=True)
class EndpointChanges:
    """A checked endpoint body: None leaves a field as it is."""

    url: str | None = None
    events: str | None = None  # comma list for relay.endpoints
    description: str | None = None  # "" clears it
    enabled: bool | None = None


def parse_endpoint_body(body: dict[str, Any], *, create: bool) -> EndpointChanges:
    """The fields of a POST (`create`) or PATCH body; EndpointBodyError naming the first bad one."""
    allowed = CREATE_FIELDS if create else PATCH_FIELDS
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise EndpointBodyError(unknown[0], f"is not a field (known: {', '.join(sorted(allowed))})")
    if create and "url" not in body:
        raise EndpointBodyError("url", "is required")
    url = body.get("url")
    if url is not None and not isinstance(url, str):
        raise EndpointBodyError("url", "must be a string")
    if "url" in body and url is None:
        raise EndpointBodyError("url", "must be a string")
    description = body.get("description")
    if description is not None and not isinstance(description, str):
        raise EndpointBodyError("description", "must be a string or null")
    enabled = body.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        raise EndpointBodyError("enabled", "must be true or false")
    return EndpointChanges(
        url=url,
        events=_events(body["events"]) if "events" in body else None,
        description=("" if description is None else description) if "description" in body else None,
        enabled=enabled,
    )


def _events(value: Any) -> str:
    # null is the default set (every type but transfer.reported), as an endpoint added
    # without --events.
    if value is None:
        return ""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise EndpointBodyError("events", "must be a list of event types or null")
    if not value:
        raise EndpointBodyError("events", "names no type (null gives the default set)")
    known = set(RelayEventType)
    for item in value:
        if item not in known:
            raise EndpointBodyError(
                "events", f"unknown event type {item!r} (known: {', '.join(sorted(known))})"
            )
    return ",".join(value)


def parse_event_query(query: Any) -> EventQuery:
    """`type`, `subject`, `since`, `limit`, `cursor`; QueryError naming the first bad one."""
    raw_type = query.get("type") or None
    try:
        type_ = None if raw_type is None else RelayEventType(raw_type)
    except ValueError:
        raise QueryError("type", f"must be one of {', '.join(RelayEventType)}") from None
    subject = reference = None
    if raw_subject := query.get("subject") or None:
        if not takes_text(raw_subject):
            # PostgreSQL's text refuses a NUL: it is the caller's input, not a database fault.
            raise QueryError("subject", "holds a NUL or a character that is not valid Unicode")
        try:
            subject, reference = parse_subject(raw_subject)
        except ValueError as exc:
            raise QueryError("subject", str(exc)) from None
    raw_cursor = query_cursor(query, parse_event_cursor)
    return EventQuery(
        type=type_,
        subject=subject,
        reference=reference,
        since=query_since(query),
        limit=query_limit(query),
        cursor=None if raw_cursor is None else parse_event_cursor(raw_cursor),
    )


def _allow(request: Request) -> tuple[Network, ...]:
    allow: tuple[Network, ...] = request.app.state.settings.relay_allow_networks
    return allow


def _engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


def _not_found(what: str) -> JSONResponse:
    return json_error(404, "not_found", f"no {what} with that id")


def _box(request: Request) -> SecretBox | JSONResponse:
    try:
        box: SecretBox = request.app.state.settings.secret_box()
    except SecretKeyError as exc:
        return json_error(503, "relay_not_configured", str(exc))
    return box


async def _run(work: Callable[[], T]) -> T | JSONResponse:
    """`work` in a worker thread, its relay errors and a database that does not answer turned
    into their JSON answers."""
    try:
        return await run_in_threadpool(work)
    except EndpointNotFoundError as exc:
        return json_error(404, "not_found", str(exc))
    except EndpointAddressError as exc:
        # PRODUCT.md: Robustness rules ("Relay destinations are not a way into the host": 400).
        return json_error(400, "address_refused", str(exc), field=exc.field)
    except EndpointInputError as exc:
        return json_error(422, "invalid", str(exc), field=exc.field)
    except (DeliveryStateError, RotationError) as exc:
        return json_error(409, "conflict", str(exc))
    except SecretKeyError as exc:
        return json_error(503, "relay_not_configured", str(exc))
    except DATABASE_ERRORS:
        return database_unavailable()


def _answer(result: Any, status: int = 200) -> Response:
    return result if isinstance(result, Response) else JSONResponse(result, status_code=status)


async def list_endpoint_records(request: Request) -> Response:
    """`GET /api/endpoints`: every endpoint not removed, oldest first."""

    def load() -> dict[str, Any]:
        with read_session(_engine(request)) as session:
            return {"items": endpoint_records(session, endpoints.listed(session))}

    return _answer(await _run(load))


async def post_endpoint(request: Request) -> Response:
    """`POST /api/endpoints`: 201 with the new endpoint and its secret (shown this once)."""
    body = await json_body(request)
    if isinstance(body, JSONResponse):
        return body
    try:
        changes = parse_endpoint_body(body, create=True)
    except EndpointBodyError as exc:
        return json_error(422, "invalid", str(exc), field=exc.field)
    box = _box(request)
    if isinstance(box, JSONResponse):
        return box

    def create() -> dict[str, Any]:
        with write_session(_engine(request)) as session:
            endpoint, secret = endpoints.add(
                session,
                box,
                url=changes.url or "",
                types=changes.events,
                description=changes.description,
                now=utcnow(),
                allow=_allow(request),
            )
            subject = f"endpoint:{endpoint.id}"
            audit(request, session, AuditAction.ENDPOINT_ADD, subject, endpoint.url)
            return endpoint_record(endpoint, secret=secret)

    return _answer(await _run(create), 201)


def _endpoint_id(request: Request) -> int | None:
    return parse_row_id(request.path_params["id"])


async def get_endpoint(request: Request) -> Response:
    """`GET /api/endpoints/{id}`."""
    endpoint_id = _endpoint_id(request)
    if endpoint_id is None:
        return _not_found("endpoint")

    def load() -> dict[str, Any]:
        with read_session(_engine(request)) as session:
            endpoint = endpoints.get(session, endpoint_id)
            pending = pending_counts(session, [endpoint_id]).get(endpoint_id, 0)
            return endpoint_record(endpoint, pending=pending)

    return _answer(await _run(load))


async def patch_endpoint(request: Request) -> Response:
    """`PATCH /api/endpoints/{id}`: url, events, description, enabled."""
    endpoint_id = _endpoint_id(request)
    if endpoint_id is None:
        return _not_found("endpoint")
    body = await json_body(request)
    if isinstance(body, JSONResponse):
        return body
    try:
        changes = parse_endpoint_body(body, create=False)
    except EndpointBodyError as exc:
        return json_error(422, "invalid", str(exc), field=exc.field)

    def change() -> dict[str, Any]:
        now = utcnow()
        with write_session(_engine(request)) as session:
            before = endpoints.audited_fields(endpoints.get(session, endpoint_id, for_update=True))
            endpoint = endpoints.update(
                session,
                endpoint_id,
                now=now,
                url=changes.url,
                types=changes.events,
                description=changes.description,
                allow=_allow(request),
            )
            if changes.enabled is not None and changes.enabled != endpoint.enabled:
                reason = None if changes.enabled else "disabled by an operator"
                endpoint = endpoints.set_enabled(
                    session, endpoint_id, changes.enabled, now=now, reason=reason
                )
            pending = pending_counts(session, [endpoint_id]).get(endpoint_id, 0)
            # The old and the new value of each field that changed (PRODUCT.md: Robustness rules).
            detail = endpoints.change_detail(before, endpoints.audited_fields(endpoint))
            audit(request, session, AuditAction.ENDPOINT_UPDATE, f"endpoint:{endpoint_id}", detail)
            return endpoint_record(endpoint, pending=pending)

    return _answer(await _run(change))


async def delete_endpoint(request: Request) -> Response:
    """`DELETE /api/endpoints/{id}`: the endpoint gets nothing more; its history stays."""
    endpoint_id = _endpoint_id(request)
    if endpoint_id is None:
        return _not_found("endpoint")

    def remove() -> dict[str, Any]:
        with write_session(_engine(request)) as session:
            removed = endpoints.remove(session, endpoint_id, now=utcnow())
            audit(request, session, AuditAction.ENDPOINT_REMOVE, f"endpoint:{endpoint_id}")
            return endpoint_record(removed)

    return _answer(await _run(remove))


async def rotate_secret(request: Request) -> Response:
    """`POST /api/endpoints/{id}/rotate-secret`: the new secret, shown this once; the old one
    keeps signing beside it for 24 h."""
    endpoint_id = _endpoint_id(request)
    if endpoint_id is None:
        return _not_found("endpoint")
    box = _box(request)
    if isinstance(box, JSONResponse):
        return box

    def rotate() -> dict[str, Any]:
        with write_session(_engine(request)) as session:
            endpoint, secret = endpoints.rotate_secret(session, box, endpoint_id, now=utcnow())
            audit(request, session, AuditAction.ENDPOINT_ROTATE, f"endpoint:{endpoint_id}")
            pending = pending_counts(session, [endpoint_id]).get(endpoint_id, 0)
            return endpoint_record(endpoint, pending=pending, secret=secret)

    return _answer(await _run(rotate))


async def list_event_page(request: Request) -> Response:
    """`GET /api/events?type=&subject=&since=&limit=&cursor=`: newest first."""
    try:
        query = parse_event_query(request.query_params)
    except QueryError as exc:
        return json_error(400, "invalid_query", str(exc), parameter=exc.parameter)

    def load() -> dict[str, Any]:
        with read_session(_engine(request)) as session:
            page = list_events(session, query)
            return {"items": page.items, "next_cursor": page.next_cursor}

    return _answer(await _run(load))


async def get_event(request: Request) -> Response:
    """`GET /api/events/{id}` (`evt_…`): the event, its deliveries and their attempts (the
    first KiB of each answer for admins only)."""
    event_id = request.path_params["id"]
    # A consumer's answer may carry its internals (an error page, a stack trace): admins
    # read its first KiB, viewers and finance the status codes (PRODUCT.md: Robustness rules).
    answers = current_operator(request).role is Role.ADMIN

    def load() -> dict[str, Any]:
        with read_session(_engine(request)) as session:
            return event_record(session, event_id, answers=answers)

    return _answer(await _run(load))


async def retry_delivery(request: Request) -> Response:
    """`POST /api/deliveries/{id}/retry`: a pending or failed delivery is due now."""
    delivery_id = parse_row_id(request.path_params["id"])
    if delivery_id is None:
        return _not_found("delivery")

    def retry() -> dict[str, Any]:
        with write_session(_engine(request)) as session:
            answer = queries.retry_delivery(session, delivery_id, now=utcnow())
            audit(request, session, AuditAction.DELIVERY_RETRY, f"delivery:{delivery_id}")
            return answer

    return _answer(await _run(retry))
