"""Control routes under /_sandbox: not the provider's API, no auth, JSON bodies."""

from __future__ import annotations

import hmac
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sandbox.accounts import documented_accounts
from sandbox.banks import bank_by_code
from sandbox.errors import ConfigError, ForbiddenError, ValidationError
from sandbox.faults import faults_from_mapping
from sandbox.fees import TRANSFER_FEE_SCHEDULE
from sandbox.http import json_body, runtime_of, success, world_of
from sandbox.models import Status
from sandbox.validation import Fields

INVALID_OTP = "Invalid two-factor authentication code"


def check_webhook_url(url: str) -> str:
    """An absolute http(s) URL with a host, else 422."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        raise ValidationError({"url": "must be an absolute http(s) URL"})
    return url


async def get_wallet(request: Request) -> JSONResponse:
    """GET /_sandbox/wallet."""
    return success({"balance": world_of(request).balance}, "Wallet")


async def set_wallet(request: Request) -> JSONResponse:
    """POST /_sandbox/wallet {"balance": kobo}."""
    fields = Fields(await json_body(request))
    balance = fields.kobo("balance", minimum=0)
    fields.done()
    assert balance is not None
    world_of(request).set_balance(balance)
    return success({"balance": balance}, "Wallet balance set")


async def fund_wallet(request: Request) -> JSONResponse:
    """POST /_sandbox/wallet/fund {"amount": kobo}: a top-up from the merchant's bank account."""
    fields = Fields(await json_body(request))
    amount = fields.kobo("amount")
    fields.done()
    assert amount is not None
    world = world_of(request)
    movement = world.fund(amount)
    data = {"reference": movement.reference, "amount": amount, "balance": world.balance}
    return success(data, "Wallet funded", status_code=201)


async def get_movements(request: Request) -> JSONResponse:
    """GET /_sandbox/wallet/movements: every wallet movement, the truth behind the statement."""
    return JSONResponse({"movements": [m.record() for m in world_of(request).movements()]})


async def set_webhook_url(request: Request) -> JSONResponse:
    """POST /_sandbox/webhook-url {"url": str | null}."""
    data = await json_body(request)
    if "url" not in data:
        raise ValidationError({"url": "is required (null clears it)"})
    url = data["url"]
    if url is not None:
        if not isinstance(url, str):
            raise ValidationError({"url": "must be a string or null"})
        check_webhook_url(url)
    world_of(request).set_webhook_url(url)
    return success({"url": url}, "Webhook URL set" if url else "Webhook URL cleared")


def _whitelist_view(request: Request) -> dict[str, Any]:
    whitelist = world_of(request).whitelist
    return {"enabled": whitelist.enabled, "entries": [e.record() for e in whitelist.entries()]}


async def get_whitelist(request: Request) -> JSONResponse:
    """GET /_sandbox/whitelist: the switch and the entries."""
    return success(_whitelist_view(request), "Whitelist")


async def set_whitelist(request: Request) -> JSONResponse:
    """POST /_sandbox/whitelist {"enabled": bool}: takes effect at once."""
    fields = Fields(await json_body(request))
    enabled = fields.boolean("enabled")
    fields.done()
    assert enabled is not None
    world_of(request).whitelist.set_enabled(enabled)
    return success(_whitelist_view(request), "Whitelist updated")


async def add_whitelist_entry(request: Request) -> JSONResponse:
    """POST /_sandbox/whitelist/entries {"ip", "description", "otp"} → 201 with the entry."""
    fields = Fields(await json_body(request))
    ip = fields.string("ip", max_length=100)
    description = fields.string("description", max_length=200)
    otp = fields.string("otp", max_length=20)
    fields.done()
    assert ip is not None and description is not None and otp is not None
    world = world_of(request)
    if not hmac.compare_digest(otp.encode(), world.config.otp.encode()):
        raise ForbiddenError(INVALID_OTP)
    entry = world.whitelist.add(ip, description)
    return JSONResponse(entry.record(), status_code=201)


async def edit_whitelist_entry(request: Request) -> JSONResponse:
    """PATCH /_sandbox/whitelist/entries/{id} {"description"}; the address cannot change."""
    data = await json_body(request)
    if "ip" in data:
        raise ValidationError({"ip": "cannot be edited; delete the entry and add a new one"})
    fields = Fields(data)
    description = fields.string("description", max_length=200)
    fields.done()
    assert description is not None
    entry = world_of(request).whitelist.describe(request.path_params["entry_id"], description)
    return JSONResponse(entry.record())


async def delete_whitelist_entry(request: Request) -> JSONResponse:
    """DELETE /_sandbox/whitelist/entries/{id}: takes effect at once."""
    entry = world_of(request).whitelist.remove(request.path_params["entry_id"])
    return JSONResponse({"deleted": True, **entry.record()})


async def complete_transfer(request: Request) -> JSONResponse:
    """POST /_sandbox/transfers/{reference}/complete: force an outcome now (409 unless pending)."""
    fields = Fields(await json_body(request))
    status = fields.string("status", choices=(Status.SUCCESSFUL.value, Status.FAILED.value))
    reason = fields.string("failure_reason", required=False, max_length=500)
    fields.done()
    assert status is not None
    world = world_of(request)
    event = world.force_complete(request.path_params["reference"], Status(status), reason)
    runtime = runtime_of(request)
    runtime.submit(event)
    runtime.wake()  # a success may have scheduled its reversal (reverse_after_success)
    return JSONResponse(world.transfer_view(event.reference))


async def reverse_transfer(request: Request) -> JSONResponse:
    """POST /_sandbox/transfers/{reference}/reverse {"reason", "webhook"}: a successful
    transfer comes back (409 unless successful, 404 unknown)."""
    fields = Fields(await json_body(request))
    reason = fields.string("reason", max_length=500)
    webhook = fields.boolean("webhook")
    fields.done()
    assert reason is not None and webhook is not None
    world = world_of(request)
    reference = request.path_params["reference"]
    event = world.reverse(reference, reason, webhook=webhook)
    if event is not None:
        runtime_of(request).submit(event)
    return JSONResponse(world.transfer_view(reference))


async def list_transfers(request: Request) -> JSONResponse:
    """GET /_sandbox/transfers: every transfer's truth, faults included."""
    return JSONResponse({"transfers": world_of(request).transfers()})


async def pay_collection(request: Request) -> JSONResponse:
    """POST /_sandbox/collections/{reference}/pay {"amount": kobo}."""
    fields = Fields(await json_body(request))
    amount = fields.kobo("amount")
    fields.done()
    assert amount is not None
    collection = world_of(request).pay_collection(request.path_params["reference"], amount)
    return JSONResponse(collection.transaction())


async def get_faults(request: Request) -> JSONResponse:
    """GET /_sandbox/faults: the active set and how often per-request faults fired."""
    world = world_of(request)
    return JSONResponse({"faults": world.faults.as_dict(), "injected": world.injected()})


async def set_faults(request: Request) -> JSONResponse:
    """POST /_sandbox/faults {…}: replace the fault set (same keys as --faults)."""
    data = await json_body(request)
    try:
        faults = faults_from_mapping(data)
    except ConfigError as exc:
        raise ValidationError({exc.field: str(exc)}) from None
    world_of(request).set_faults(faults)
    return JSONResponse({"faults": faults.as_dict()})


async def get_webhooks(request: Request) -> JSONResponse:
    """GET /_sandbox/webhooks: every attempt, with the answer it got."""
    return JSONResponse({"attempts": [a.record() for a in world_of(request).attempts()]})


async def get_accounts(request: Request) -> JSONResponse:
    """GET /_sandbox/accounts: the documented test accounts."""
    accounts = []
    for account in documented_accounts():
        bank = bank_by_code(account.bank_code)
        accounts.append(
            {
                "bank_code": account.bank_code,
                "bank_name": bank.name if bank else None,
                "account_number": account.account_number,
                "account_name": account.account_name,
                "behaviour": account.behaviour.value,
                "failure_reason": account.failure_reason,
            }
        )
    return JSONResponse({"accounts": accounts, "fee_schedule": TRANSFER_FEE_SCHEDULE})


def control_routes() -> list[Route]:
    """The /_sandbox routes."""
    return [
        Route("/_sandbox/wallet", get_wallet, methods=["GET"]),
        Route("/_sandbox/wallet", set_wallet, methods=["POST"]),
        Route("/_sandbox/wallet/fund", fund_wallet, methods=["POST"]),
        Route("/_sandbox/wallet/movements", get_movements, methods=["GET"]),
        Route("/_sandbox/webhook-url", set_webhook_url, methods=["POST"]),
        Route("/_sandbox/whitelist", get_whitelist, methods=["GET"]),
        Route("/_sandbox/whitelist", set_whitelist, methods=["POST"]),
        Route("/_sandbox/whitelist/entries", add_whitelist_entry, methods=["POST"]),
        Route("/_sandbox/whitelist/entries/{entry_id}", edit_whitelist_entry, methods=["PATCH"]),
        Route("/_sandbox/whitelist/entries/{entry_id}", delete_whitelist_entry, methods=["DELETE"]),
        Route("/_sandbox/transfers", list_transfers, methods=["GET"]),
        Route("/_sandbox/transfers/{reference}/complete", complete_transfer, methods=["POST"]),
        Route("/_sandbox/transfers/{reference}/reverse", reverse_transfer, methods=["POST"]),
        Route("/_sandbox/collections/{reference}/pay", pay_collection, methods=["POST"]),
        Route("/_sandbox/faults", get_faults, methods=["GET"]),
        Route("/_sandbox/faults", set_faults, methods=["POST"]),
        Route("/_sandbox/webhooks", get_webhooks, methods=["GET"]),
        Route("/_sandbox/accounts", get_accounts, methods=["GET"]),
    ]
