"""The admin API of collections: create, register, read one, list (PRODUCT.md: Collections)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from admin.api import (
    DATABASE_ERRORS,
    PAYOUT_STATUS,
    database_unavailable,
    json_body,
    parse_transfer_query,
)
from admin.errors import ExpectedInputError, QueryError
from admin.expected import parse_expected_collection, register_collection
from ledger.collections import CURSOR_KIND, collection_record, find_collection, list_collections
from ledger.db import read_session, write_session
from ledger.errors import ConflictError
from ledger.types import takes_text, utcnow
from payments.collections import CollectionRequest, create_collection
from payments.errors import CollectionError, CollectionInputError
from receiver.answers import json_error

# The body's keys are the CLI's option names (PRODUCT.md: Collections).
CREATE_FIELDS = frozenset(
    {"amount", "reference", "currency", "customer_name", "customer_email", "customer_phone"}
)


def _engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


async def get_collection(request: Request) -> Response:
    """`GET /api/collections/{reference}` (merchant's or provider's reference)."""
    reference = request.path_params["reference"]
    if not takes_text(reference) or len(reference) > 200:
        return json_error(404, "not_found", "no collection with that reference")

    def load() -> dict[str, Any] | None:
        with read_session(_engine(request)) as session:
            collection = find_collection(session, reference)
            return None if collection is None else collection_record(session, collection)

    try:
        record = await run_in_threadpool(load)
    except DATABASE_ERRORS:
        return database_unavailable()
    if record is None:
        return json_error(404, "not_found", f"no collection with reference {reference!r}")
    return JSONResponse(record)


async def list_collection_page(request: Request) -> Response:
    """`GET /api/collections?status=&finding=&since=&limit=&cursor=`."""
    try:
        query = parse_transfer_query(request.query_params, cursor_kind=CURSOR_KIND)
    except QueryError as exc:
        return json_error(400, "invalid_query", str(exc), parameter=exc.parameter)

    def load() -> dict[str, Any]:
        with read_session(_engine(request)) as session:
            page = list_collections(
                session,
                status=query.status,
                finding=query.finding,
                since=query.since,
                limit=query.limit,
                cursor=query.cursor,
            )
            return {
                "items": [collection_record(session, c) for c in page.items],
                "next_cursor": page.next_cursor,
            }

    try:
        return JSONResponse(await run_in_threadpool(load))
    except DATABASE_ERRORS:
        return database_unavailable()


async def post_expected_collection(request: Request) -> Response:
    """`POST /api/collections/expected`: 201 new, 200 identical, 409 different."""
    body = await json_body(request)
    if isinstance(body, JSONResponse):
        return body
    try:
        expected = parse_expected_collection(body)
    except ExpectedInputError as exc:
        return json_error(422, "invalid", exc.message, field=exc.field)

    def store() -> tuple[dict[str, Any], bool]:
        with write_session(_engine(request)) as session:
            return register_collection(session, expected, now=utcnow())

    try:
        record, created = await run_in_threadpool(store)
    except ConflictError as exc:
        return json_error(409, "conflict", str(exc))
    except DATABASE_ERRORS:
        return database_unavailable()
    return JSONResponse(record, status_code=201 if created else 200)


def collection_request(body: dict[str, Any]) -> CollectionRequest:
    """The request a JSON body asks for; CollectionInputError for an unknown or missing key
    (the values themselves are checked by `payments.collections.validate`)."""
    unknown = sorted(set(body) - CREATE_FIELDS)
    if unknown:
        raise CollectionInputError(f"unknown field {unknown[0]!r}", field=unknown[0])
    for name in ("amount", "reference"):
        if name not in body:
            raise CollectionInputError(f"{name} is required", field=name)
    return CollectionRequest(
        reference=body["reference"],
        amount=body["amount"],
        currency=body.get("currency", "NGN"),
        customer_name=body.get("customer_name"),
        customer_email=body.get("customer_email"),
        customer_phone=body.get("customer_phone"),
    )


async def post_collection(request: Request) -> Response:
    """`POST /api/collections`: intent, then the provider's account (as `collection create`);
    201, or 200 when the same collection already exists."""
    client = request.app.state.payout_client
    body = await json_body(request)
    if isinstance(body, JSONResponse):
        return body
    try:
        wanted = collection_request(body)
    except CollectionInputError as exc:
        return json_error(422, "invalid", exc.message, field=exc.field)
    if client is None:
        return json_error(
            503,
            "provider_not_configured",
            "collections need PAYRECON_PROVIDER_BASE_URL and PAYRECON_PROVIDER_SECRET_KEY",
        )

    def create() -> tuple[dict[str, Any], bool, list[str]]:
        result = create_collection(_engine(request), client, wanted, now=utcnow())
        return result.record, result.created, result.warnings

    try:
        record, created, warnings = await run_in_threadpool(create)
    except CollectionInputError as exc:
        return json_error(422, "invalid", exc.message, field=exc.field)
    except CollectionError as exc:
        reference = wanted.reference if isinstance(wanted.reference, str) else None
        return json_error(PAYOUT_STATUS[exc.kind], exc.kind.value, exc.message, reference=reference)
    except DATABASE_ERRORS:
        return database_unavailable()
    if warnings:
        record = {**record, "warnings": warnings}
    return JSONResponse(record, status_code=201 if created else 200)
