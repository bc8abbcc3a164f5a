"""The ten provider endpoints under /v1 (spec, Endpoints); handlers stay thin."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sandbox.auth import authenticate
from sandbox.banks import BANKS
from sandbox.errors import RateLimitedError, UnavailableError
from sandbox.http import json_body, origin_address, pause, runtime_of, success, world_of
from sandbox.validation import Fields, query_choice, query_int

VA_TYPES = ("static", "dynamic")
VA_STATUSES = ("active", "inactive")
CUSTOMER_FIELDS = ("reference", "first_name", "last_name", "email", "phone", "bvn")


def _auth(request: Request, *, public_allowed: bool = False) -> None:
    authenticate(request, world_of(request).config, public_allowed=public_allowed)


async def list_banks(request: Request) -> JSONResponse:
    """GET /v1/banks (public key allowed)."""
    _auth(request, public_allowed=True)
    return success([{"name": b.name, "code": b.code} for b in BANKS], "Banks retrieved")


async def account_enquiry(request: Request) -> JSONResponse:
    """GET /v1/account-enquiry (public key allowed); faults may slow, refuse or limit it."""
    _auth(request, public_allowed=True)
    fields = Fields(dict(request.query_params))
    account_number = fields.account_number()
    bank_code = fields.string("bank_code")
    fields.done()
    assert account_number is not None and bank_code is not None
    world = world_of(request)
    if world.roll("enquiry_unavailable"):
        raise UnavailableError()
    answer = world.enquire(bank_code, account_number)
    if world.faults.enquiry_slow > 0:
        world.count_injected("enquiry_slow")
        await pause(request, world.faults.enquiry_slow)
    return success(answer, "Account name retrieved")


async def initiate_transfer(request: Request) -> JSONResponse:
    """POST /v1/transfer/initiate: auth, whitelist, validation, then the refusal causes."""
    _auth(request)
    world = world_of(request)
    world.whitelist.check(origin_address(request))
    fields = Fields(await json_body(request))
    amount = fields.kobo("amount")
    bank_code = fields.string("bank_code", max_length=20, allow_blank=True)
    account_number = fields.account_number()
    reference = fields.string("reference", max_length=100)
    fields.done()
    assert amount is not None and bank_code is not None
    assert account_number is not None and reference is not None
    transfer = world.initiate_transfer(
        amount=amount, bank_code=bank_code, account_number=account_number, reference=reference
    )
    runtime_of(request).wake()
    data = {
        "reference": transfer.reference,
        "merchant_reference": transfer.merchant_reference,
        "amount": transfer.amount,
        "status": "pending",
        "fee": transfer.fee_quoted,
    }
    return success(data, "Transfer initiated")


async def _lookup_faults(request: Request) -> None:
    world = world_of(request)
    faults = world.faults
    if faults.lookup_latency > 0:
        await pause(request, faults.lookup_latency)
    if world.roll("lookup_timeout"):
        await pause(request, faults.lookup_timeout_seconds)
    if world.roll("lookup_5xx"):
        raise UnavailableError()
    if world.roll("lookup_429"):
        raise RateLimitedError(faults.lookup_retry_after)


async def get_transaction(request: Request) -> JSONResponse:
    """GET /v1/transaction/{reference}: by the provider's or the merchant's reference."""
    _auth(request)
    await _lookup_faults(request)
    data = world_of(request).transaction(request.path_params["reference"])
    return success(data, "Transaction retrieved")


async def get_collection(request: Request) -> JSONResponse:
    """GET /v1/collection/{reference}: a collection's transaction."""
    _auth(request)
    await _lookup_faults(request)
    world = world_of(request)
    data = world.collection_transaction(request.path_params["reference"])
    if world.roll("lookup_garbage"):
        # A provider answer no reading of the spec interprets: status and amount mangled.
        data = {**data, "status": "in_limbo", "amount": "a lot"}
    return success(data, "Transaction retrieved")


async def create_collection(request: Request) -> JSONResponse:
    """POST /v1/collection/bank-transfer: NGN only; reference and amount required."""
    _auth(request)
    fields = Fields(await json_body(request))
    fields.string("currency", choices=("NGN",))
    reference = fields.string("reference", max_length=100)
    amount = fields.kobo("amount")
    customer = {
        name: value
        for name in ("customer_name", "customer_email", "customer_phone")
        if (value := fields.string(name, required=False, allow_blank=True)) is not None
    }
    meta = fields.mapping("meta") or {}
    fields.done()
    assert reference is not None and amount is not None
    collection = world_of(request).create_collection(
        reference=reference, amount=amount, customer=customer, meta=meta
    )
    return success(collection.created(), "Collection account created")


async def create_virtual_account(request: Request) -> JSONResponse:
    """POST /v1/virtual-accounts: 201, or 422 (dynamic accounts need expected_amount)."""
    _auth(request)
    fields = Fields(await json_body(request))
    type_ = fields.string("type", choices=VA_TYPES)
    customer = fields.strings("customer", CUSTOMER_FIELDS, required=True)
    expected = fields.kobo("expected_amount", minimum=0, required=False)
    if type_ == "dynamic" and not fields.present("expected_amount"):
        fields.fail("expected_amount", "is required for a dynamic account")
    meta = fields.mapping("meta") or {}
    fields.done()
    assert type_ is not None
    account = world_of(request).virtual_accounts.create(type_, customer, expected, meta)
    return success(account.record(), "Virtual account created", status_code=201)


async def list_virtual_accounts(request: Request) -> JSONResponse:
    """GET /v1/virtual-accounts?type=&status=&page=&per_page= (per_page ≤ 100)."""
    _auth(request)
    params = request.query_params
    type_ = query_choice(params, "type", VA_TYPES)
    status = query_choice(params, "status", VA_STATUSES)
    page = query_int(params, "page", default=1, minimum=1, maximum=1_000_000)
    per_page = query_int(params, "per_page", default=20, minimum=1, maximum=100)
    items, total = world_of(request).virtual_accounts.page(
        type_=type_, status=status, page=page, per_page=per_page
    )
    meta = {"page": page, "per_page": per_page, "total": total}
    return success([a.record() for a in items], "Virtual accounts retrieved", meta=meta)


async def get_virtual_account(request: Request) -> JSONResponse:
    """GET /v1/virtual-accounts/{uid}."""
    _auth(request)
    account = world_of(request).virtual_accounts.get(request.path_params["uid"])
    return success(account.record(), "Virtual account retrieved")


async def deactivate_virtual_account(request: Request) -> JSONResponse:
    """POST /v1/virtual-accounts/{uid}/deactivate (no body; idempotent)."""
    _auth(request)
    account = world_of(request).virtual_accounts.deactivate(request.path_params["uid"])
    return success(account.record(), "Virtual account deactivated")


def provider_routes() -> list[Route]:
    """The /v1 routes."""
    return [
        Route("/v1/virtual-accounts", create_virtual_account, methods=["POST"]),
        Route("/v1/virtual-accounts", list_virtual_accounts, methods=["GET"]),
        Route("/v1/virtual-accounts/{uid}", get_virtual_account, methods=["GET"]),
        Route(
            "/v1/virtual-accounts/{uid}/deactivate", deactivate_virtual_account, methods=["POST"]
        ),
        Route("/v1/collection/bank-transfer", create_collection, methods=["POST"]),
        Route("/v1/collection/{reference}", get_collection, methods=["GET"]),
        Route("/v1/transaction/{reference}", get_transaction, methods=["GET"]),
        Route("/v1/transfer/initiate", initiate_transfer, methods=["POST"]),
        Route("/v1/account-enquiry", account_enquiry, methods=["GET"]),
        Route("/v1/banks", list_banks, methods=["GET"]),
    ]
