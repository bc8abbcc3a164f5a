"""AsyncProviderClient: the asyncio twin of `provider.client.ProviderClient`.

Import it from `provider.client`; it lives here only to keep each module small.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar

import httpx
import tenacity
from pydantic import SecretStr

from provider.answers import translated
from provider.core import Call, Core, log_call
from provider.errors import ProviderError
from provider.models import (
    AccountEnquiry,
    Bank,
    Collection,
    Customer,
    Page,
    Transaction,
    TransferInitiation,
    VirtualAccount,
)

T = TypeVar("T")


async def _async_sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


class AsyncProviderClient:
    """The asyncio twin of ProviderClient: same methods, same errors, awaited."""

    def __init__(
        self,
        base_url: str,
        secret_key: str | SecretStr,
        *,
        timeout: float = 10.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
        enquiry_cache_ttl: float = 60.0,
        sleep: Callable[[float], Awaitable[None]] = _async_sleep,
        clock: Callable[[], float] | None = None,
        rand: Callable[[], float] | None = None,
    ) -> None:
        self._core = Core(
            base_url,
            secret_key,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            enquiry_cache_ttl=enquiry_cache_ttl,
            clock=clock,
            rand=rand,
        )
        self._sleep = sleep
        self._http = httpx.AsyncClient(transport=transport, timeout=timeout, follow_redirects=False)

    def __repr__(self) -> str:
        return f"AsyncProviderClient(base_url={self._core.base_url!r})"

    async def __aenter__(self) -> AsyncProviderClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def _run(self, call: Call[T]) -> T:
        started = time.monotonic()
        if not self._core.may_retry(call):
            # The reconciler's client (max_retries=0) sends every lookup this way: a retry
            # loop per call is measurable at concurrency 32 (bench/RESULTS.md, section 2).
            try:
                once: T = await self._send(call)
            except ProviderError as error:
                log_call(call, 1, started, error)
                raise
            log_call(call, 1, started, None)
            return once
        retrying = tenacity.AsyncRetrying(sleep=self._sleep, **self._core.retry_controls(call))
        try:
            result: T = await retrying(self._send, call)
        except ProviderError as error:
            log_call(call, retrying.statistics["attempt_number"], started, error)
            raise
        log_call(call, retrying.statistics["attempt_number"], started, None)
        return result

    async def _send(self, call: Call[T]) -> T:
        with translated(self._core.scrub, self._core.timeout):
            response = await self._http.send(call.request)
        return call.interpret(response, self._core.scrub)

    async def banks(self) -> list[Bank]:
        """Banks and the codes endpoints 8 and 9 accept."""
        return await self._run(self._core.banks())

    async def account_enquiry(self, account_number: str, bank_code: str) -> AccountEnquiry:
        """The account holder's name; answers are cached for `enquiry_cache_ttl` seconds."""
        call = self._core.account_enquiry(account_number, bank_code)
        cached = self._core.enquiries.get(call.cache_key)
        if cached is not None:
            return cached
        result = await self._run(call)
        self._core.enquiries.put(call.cache_key, result)
        return result

    async def initiate_transfer(
        self, *, amount: int, bank_code: str, account_number: str, reference: str
    ) -> TransferInitiation:
        """Start a payout; sent exactly once, never retried."""
        return await self._run(
            self._core.initiate_transfer(
                amount=amount,
                bank_code=bank_code,
                account_number=account_number,
                reference=reference,
            )
        )

    async def get_transaction(self, reference: str) -> Transaction:
        """A transaction by reference."""
        return await self._run(self._core.get_transaction(reference))

    async def get_collection(self, reference: str) -> Transaction:
        """The transaction of a collection, by the collection reference."""
        return await self._run(self._core.get_collection(reference))

    async def create_collection(
        self,
        *,
        reference: str,
        amount: int,
        customer_name: str | None = None,
        customer_email: str | None = None,
        customer_phone: str | None = None,
        meta: Mapping[str, Any] | None = None,
        currency: str = "NGN",
    ) -> Collection:
        """Ask for an account a customer can pay `amount` kobo into."""
        return await self._run(
            self._core.create_collection(
                reference=reference,
                amount=amount,
                customer_name=customer_name,
                customer_email=customer_email,
                customer_phone=customer_phone,
                meta=meta,
                currency=currency,
            )
        )

    async def create_virtual_account(
        self,
        *,
        type: str,
        customer: Customer | Mapping[str, Any],
        expected_amount: int | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> VirtualAccount:
        """Issue a static or dynamic virtual account for a customer."""
        return await self._run(
            self._core.create_virtual_account(
                type=type, customer=customer, expected_amount=expected_amount, meta=meta
            )
        )

    async def list_virtual_accounts(
        self,
        *,
        type: str | None = None,
        status: str | None = None,
        page: int = 1,
        per_page: int = 20,
    ) -> Page[VirtualAccount]:
        """One page of virtual accounts, optionally filtered."""
        return await self._run(
            self._core.list_virtual_accounts(type=type, status=status, page=page, per_page=per_page)
        )

    def iter_virtual_accounts(
        self, *, type: str | None = None, status: str | None = None, per_page: int = 100
    ) -> AsyncIterator[VirtualAccount]:
        """Every matching virtual account, fetching pages as needed (`async for`)."""
        first = self._core.list_virtual_accounts(
            type=type, status=status, page=1, per_page=per_page
        )

        async def pages() -> AsyncIterator[VirtualAccount]:
            current = await self._run(first)
            while True:
                for item in current.items:
                    yield item
                if current.is_last:
                    return
                current = await self.list_virtual_accounts(
                    type=type, status=status, page=current.page + 1, per_page=per_page
                )

        return pages()

    async def get_virtual_account(self, uid: str) -> VirtualAccount:
        """One virtual account by uid."""
        return await self._run(self._core.get_virtual_account(uid))

    async def deactivate_virtual_account(self, uid: str) -> VirtualAccount:
        """Make a virtual account inactive."""
        return await self._run(self._core.deactivate_virtual_account(uid))
