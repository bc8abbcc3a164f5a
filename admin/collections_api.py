"""The admin API of collections: create, register, read one, list (docs/rules.md: Collections)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from admin.actions import payments
from admin.api import get_record, list_page, post_registration, provider_client
from admin.expected import parse_expected_collection
from admin.shell import actor_of, engine_of, in_thread, json_body
from ledger.collections import CURSOR_KIND, collection_record, find_collection, list_collections
from ledger.types import utcnow
from payments.collections import CollectionRequest, CollectionResult
from payments.errors import CollectionError, CollectionInputError

# The body's keys are the CLI's option names (docs/rules.md: Collections).
CREATE_FIELDS = frozenset(
    {"amount", "reference", "currency", "customer_name", "customer_email", "customer_phone"}
)


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
        request, parse=parse_expected_collection, registry=payments.COLLECTIONS
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
    body = await json_body(request)
    try:
        wanted = collection_request(body)
    except CollectionInputError as exc:
        raise payments.refused(exc, None) from None
    client = provider_client(request, "collections")
    actor = actor_of(request)

    def create() -> CollectionResult:
        return payments.collect(engine_of(request), client, actor, wanted, now=utcnow())

    try:
        result = await in_thread(create)
    except CollectionError as exc:
        raise payments.refused(exc, wanted.reference) from None
    record = result.record
    if result.warnings:
        record = {**record, "warnings": result.warnings}
    return JSONResponse(record, status_code=201 if result.created else 200)
