"""The admin API of collections: create, register, read one, list (PRODUCT.md: Collections)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from admin.api import (
    PAYOUT_STATUS,
    get_record,
    json_body,
    list_page,
    post_registration,
)
from admin.expected import parse_expected_collection, register_collection
from admin.identity import audit
from admin.unavailable import DATABASE_ERRORS, database_unavailable
from ledger.audit import AuditAction
from ledger.collections import CURSOR_KIND, collection_record, find_collection, list_collections
from ledger.types import utcnow
from payments.collections import CollectionRequest, create_collection
from payments.errors import CollectionError, CollectionInputError
from web.answers import json_error

# The body's keys are the CLI's option names (PRODUCT.md: Collections).
CREATE_FIELDS = frozenset(
    {"amount", "reference", "currency", "customer_name", "customer_email", "customer_phone"}
)


def _engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


async def get_collection(request: Request) -> Response:
    """`GET /api/collections/{reference}` (merchant's or provider's reference)."""
    return await get_record(
        request, find=find_collection, record=collection_record, noun="collection"
    )


async def list_collection_page(request: Request) -> Response:
    """`GET /api/collections?status=&finding=&since=&limit=&cursor=`."""
    return await list_page(
        request, lister=list_collections, record=collection_record, cursor_kind=CURSOR_KIND
    )


async def post_expected_collection(request: Request) -> Response:
    """`POST /api/collections/expected`: 201 new, 200 identical, 409 different."""
    return await post_registration(
        request,
        parse=parse_expected_collection,
        register=register_collection,
        action=AuditAction.COLLECTION_EXPECT,
        subject="collection",
    )


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
        def audited(session: Session) -> None:
            detail = f"amount {wanted.amount} kobo"
            subject = f"collection:{wanted.reference}"
            audit(request, session, AuditAction.COLLECTION_CREATE, subject, detail)

        result = create_collection(
            _engine(request), client, wanted, now=utcnow(), on_intent=audited
        )
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
