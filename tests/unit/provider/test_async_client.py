"""AsyncProviderClient behaves exactly like ProviderClient."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from provider import errors
from provider.client import AsyncProviderClient
from tests.unit.provider.support import (
    ENQUIRY,
    INITIATION,
    TXN,
    VA,
    Script,
    async_client,
    failed,
    ok,
)


def test_async_banks_and_lookup() -> None:
    """The async client returns the same typed results."""
    script = Script(ok([{"name": "Access Bank", "code": "044"}]), ok(TXN))

    async def run() -> None:
        client, _ = async_client(script)
        async with client:
            banks = await client.banks()
            transaction = await client.get_transaction("TRF_1")
        assert banks[0].code == "044"
        assert transaction.amount == 100_000

    asyncio.run(run())
    assert [r.url.path for r in script.requests] == ["/v1/banks", "/v1/transaction/TRF_1"]


def test_async_get_retries_5xx_then_succeeds() -> None:
    """A 503 then a 200 is retried after one awaited sleep."""
    script = Script(failed("Service unavailable", 503), ok(TXN))
    client, sleeps = async_client(script)
    result = asyncio.run(client.get_transaction("TRF_1"))
    assert result.reference == "TRF_1"
    assert len(script.requests) == 2 and len(sleeps) == 1


def test_async_post_is_never_retried() -> None:
    """An async transfer initiation answered 503 is sent once."""
    script = Script(failed("Service unavailable", 503), ok(INITIATION))
    client, sleeps = async_client(script)
    with pytest.raises(errors.ProviderUnavailableError):
        asyncio.run(
            client.initiate_transfer(
                amount=1, bank_code="058", account_number="0000000018", reference="m"
            )
        )
    assert len(script.requests) == 1 and sleeps == []


def test_async_429_retry_after_is_honoured() -> None:
    """The async client waits out Retry-After too."""
    script = Script(failed("Too many requests", 429, **{"Retry-After": "2"}), ok(TXN))
    client, sleeps = async_client(script)
    asyncio.run(client.get_transaction("TRF_1"))
    assert sleeps == [2.0]


def test_async_timeout_and_refusal_map_like_sync() -> None:
    """Timeouts and refusal causes become the same errors."""
    client, _ = async_client(Script(httpx.ReadTimeout("slow")), max_retries=0)
    with pytest.raises(errors.ProviderTimeoutError):
        asyncio.run(client.banks())
    client, _ = async_client(Script(failed("Duplicate reference")))
    with pytest.raises(errors.DuplicateReferenceError):
        asyncio.run(
            client.initiate_transfer(
                amount=1, bank_code="058", account_number="0000000018", reference="m"
            )
        )


def test_async_enquiry_cache() -> None:
    """The second async enquiry sends nothing."""
    script = Script(ok(ENQUIRY))
    client, _ = async_client(script)

    async def run() -> None:
        await client.account_enquiry("0000000018", "058")
        await client.account_enquiry("0000000018", "058")

    asyncio.run(run())
    assert len(script.requests) == 1


def test_async_iterator_walks_every_page() -> None:
    """`async for` over iter_virtual_accounts fetches pages until the total is reached."""

    def answer(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params["page"])
        items = [{**VA, "uid": f"va_{page}_{n}"} for n in range(2 if page < 3 else 1)]
        return ok(items, meta={"page": page, "per_page": 2, "total": 5})

    script = Script(answer)
    client, _ = async_client(script)

    async def run() -> list[str]:
        return [account.uid async for account in client.iter_virtual_accounts(per_page=2)]

    uids = asyncio.run(run())
    assert len(uids) == 5 and len(set(uids)) == 5
    assert [r.url.params["page"] for r in script.requests] == ["1", "2", "3"]


def test_async_validation_happens_before_sending() -> None:
    """Bad arguments are refused by the async client too, and at call time for the iterator."""
    script = Script(ok({}))
    client, _ = async_client(script)
    with pytest.raises(errors.ProviderRequestError):
        asyncio.run(client.create_collection(reference="c", amount=1, currency="USD"))
    with pytest.raises(errors.ProviderRequestError):
        client.iter_virtual_accounts(status="closed")
    assert script.requests == []


def test_async_create_and_deactivate_virtual_account() -> None:
    """The virtual-account POSTs send the same bodies as the sync client."""
    script = Script(ok(VA, status=201), ok({**VA, "status": "inactive"}))
    client, _ = async_client(script)

    async def run() -> tuple[str, str]:
        created = await client.create_virtual_account(type="static", customer={"email": "a@b"})
        gone = await client.deactivate_virtual_account(created.uid)
        return created.status, gone.status

    assert asyncio.run(run()) == ("active", "inactive")
    body = json.loads(script.requests[0].content)
    assert body == {"type": "static", "customer": {"email": "a@b"}}


def test_async_client_has_every_public_method_of_the_sync_client() -> None:
    """Parity: the same public names exist on both clients."""
    from provider.client import ProviderClient

    sync = {n for n in dir(ProviderClient) if not n.startswith("_")} - {"close"}
    async_ = {n for n in dir(AsyncProviderClient) if not n.startswith("_")} - {"aclose"}
    assert sync == async_
