"""The async client against a real sandbox: the same answers and errors as the sync one."""

from __future__ import annotations

import asyncio

import pytest

from provider import errors
from provider.client import AsyncProviderClient
from provider.models import TransferStatus
from tests.integration.provider.conftest import Sandbox


def test_async_client_end_to_end(sandbox: Sandbox) -> None:
    """Banks, enquiry, a transfer, its lookup and a refusal, all awaited."""
    bank_code, number = sandbox.good_account()

    async def run() -> None:
        async with AsyncProviderClient(sandbox.url, sandbox.config.secret_key) as client:
            assert await client.banks()
            assert (await client.account_enquiry(number, bank_code)).account_number == number
            sent = await client.initiate_transfer(
                amount=10_000, bank_code=bank_code, account_number=number, reference="a-1"
            )
            found = await client.get_transaction(sent.reference)
            assert found.status is TransferStatus.PENDING
            with pytest.raises(errors.DuplicateReferenceError):
                await client.initiate_transfer(
                    amount=10_000, bank_code=bank_code, account_number=number, reference="a-1"
                )

    asyncio.run(run())


def test_async_iterator_and_404(sandbox: Sandbox) -> None:
    """The async iterator walks pages; an unknown uid is NotFoundError."""

    async def run() -> list[str]:
        async with AsyncProviderClient(sandbox.url, sandbox.config.secret_key) as client:
            for n in range(5):
                await client.create_virtual_account(type="static", customer={"reference": str(n)})
            with pytest.raises(errors.NotFoundError):
                await client.get_virtual_account("va_missing")
            return [a.uid async for a in client.iter_virtual_accounts(per_page=2)]

    assert len(set(asyncio.run(run()))) == 5


def test_async_wrong_key_is_authentication_error(sandbox: Sandbox) -> None:
    """A wrong key is AuthenticationError for the async client too."""

    async def run() -> None:
        async with AsyncProviderClient(sandbox.url, "sk_test_wrongKey00000000") as client:
            await client.banks()

    with pytest.raises(errors.AuthenticationError):
        asyncio.run(run())
