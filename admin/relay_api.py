"""The relay's admin API under `/api`: endpoints, events, and retrying a delivery.

Handlers check the input, run one function of `relay/` in a worker thread and answer; the
queries live in `relay/queries.py` and the endpoint operations in `relay/endpoints.py`.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from admin.actions import relay as actions
from admin.actions.relay import EndpointChanges
from admin.api import query_cursor, query_limit, query_since
from admin.errors import EndpointBodyError, NotFoundError, QueryError
from admin.identity import Role, current_operator
from admin.shell import actor_of, engine_of, in_thread, json_body, settings_of
from ledger.db import read_session, write_session
from ledger.events.types import RelayEventType
from ledger.types import takes_text, utcnow
from relay import endpoints
from relay.addresses import Network
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

# The fields a body may hold: POST takes the first three, PATCH all four.
CREATE_FIELDS = frozenset({"url", "events", "description"})
PATCH_FIELDS = CREATE_FIELDS | {"enabled"}


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
    allow: tuple[Network, ...] = settings_of(request).relay_allow_networks
    return allow


def _row_id(request: Request, what: str) -> int:
    row_id = parse_row_id(request.path_params["id"])
    if row_id is None:
        raise NotFoundError(f"no {what} with that id")
    return row_id


def _pending(session: Any, endpoint_id: int) -> int:
    return pending_counts(session, [endpoint_id]).get(endpoint_id, 0)


async def list_endpoint_records(request: Request) -> Response:
    """`GET /api/endpoints`: every endpoint not removed, oldest first."""

    def load() -> dict[str, Any]:
        with read_session(engine_of(request)) as session, actions.relay_errors():
            return {"items": endpoint_records(session, endpoints.listed(session))}

    return JSONResponse(await in_thread(load))


async def post_endpoint(request: Request) -> Response:
    """`POST /api/endpoints`: 201 with the new endpoint and its secret (shown this once)."""
    changes = parse_endpoint_body(await json_body(request), create=True)
    box = actions.secret_box(settings_of(request))
    actor = actor_of(request)

    def create() -> dict[str, Any]:
        with write_session(engine_of(request)) as session:
            endpoint, secret = actions.add_endpoint(
                session,
                actor,
                box,
                url=changes.url or "",
                events=changes.events,
                description=changes.description,
                allow=_allow(request),
                now=utcnow(),
            )
            return endpoint_record(endpoint, secret=secret)

    return JSONResponse(await in_thread(create), status_code=201)


async def get_endpoint(request: Request) -> Response:
    """`GET /api/endpoints/{id}`."""
    endpoint_id = _row_id(request, "endpoint")

    def load() -> dict[str, Any]:
        with read_session(engine_of(request)) as session, actions.relay_errors():
            endpoint = endpoints.get(session, endpoint_id)
            return endpoint_record(endpoint, pending=_pending(session, endpoint_id))

    return JSONResponse(await in_thread(load))


async def patch_endpoint(request: Request) -> Response:
    """`PATCH /api/endpoints/{id}`: url, events, description, enabled."""
    endpoint_id = _row_id(request, "endpoint")
    changes = parse_endpoint_body(await json_body(request), create=False)
    actor = actor_of(request)
    # A new URL may carry a broker's credentials, sealed with the relay's keys.
    box = actions.secret_box(settings_of(request)) if changes.url is not None else None

    def change() -> dict[str, Any]:
        with write_session(engine_of(request)) as session:
            endpoint = actions.update_endpoint(
                session, actor, endpoint_id, changes, box=box, allow=_allow(request), now=utcnow()
            )
            return endpoint_record(endpoint, pending=_pending(session, endpoint_id))

    return JSONResponse(await in_thread(change))


async def delete_endpoint(request: Request) -> Response:
    """`DELETE /api/endpoints/{id}`: the endpoint gets nothing more; its history stays."""
    endpoint_id = _row_id(request, "endpoint")
    actor = actor_of(request)

    def remove() -> dict[str, Any]:
        with write_session(engine_of(request)) as session:
            removed = actions.remove_endpoint(session, actor, endpoint_id, now=utcnow())
            return endpoint_record(removed)

    return JSONResponse(await in_thread(remove))


async def rotate_secret(request: Request) -> Response:
    """`POST /api/endpoints/{id}/rotate-secret`: the new secret, shown this once; the old one
    keeps signing beside it for 24 h."""
    endpoint_id = _row_id(request, "endpoint")
    box = actions.secret_box(settings_of(request))
    actor = actor_of(request)

    def rotate() -> dict[str, Any]:
        with write_session(engine_of(request)) as session:
            endpoint, secret = actions.rotate_secret(session, actor, box, endpoint_id, now=utcnow())
            pending = _pending(session, endpoint_id)
            return endpoint_record(endpoint, pending=pending, secret=secret)

    return JSONResponse(await in_thread(rotate))


async def list_event_page(request: Request) -> Response:
    """`GET /api/events?type=&subject=&since=&limit=&cursor=`: newest first."""
    query = parse_event_query(request.query_params)

    def load() -> dict[str, Any]:
        with read_session(engine_of(request)) as session, actions.relay_errors():
            page = list_events(session, query)
            return {"items": page.items, "next_cursor": page.next_cursor}

    return JSONResponse(await in_thread(load))


async def get_event(request: Request) -> Response:
    """`GET /api/events/{id}` (`evt_…`): the event, its deliveries and their attempts (the
    first KiB of each answer for admins only)."""
    event_id = request.path_params["id"]
    # A consumer's answer may carry its internals (an error page, a stack trace): admins
    # read its first KiB, viewers and finance the status codes (docs/rules.md: Robustness rules).
    answers = current_operator(request).role is Role.ADMIN

    def load() -> dict[str, Any]:
        with read_session(engine_of(request)) as session, actions.relay_errors():
            return event_record(session, event_id, answers=answers)

    return JSONResponse(await in_thread(load))


async def retry_delivery(request: Request) -> Response:
    """`POST /api/deliveries/{id}/retry`: a pending or failed delivery is due now."""
    delivery_id = _row_id(request, "delivery")
    actor = actor_of(request)

    def retry() -> dict[str, Any]:
        with write_session(engine_of(request)) as session:
            return actions.retry_delivery(session, actor, delivery_id, now=utcnow())

    return JSONResponse(await in_thread(retry))
