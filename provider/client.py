"""The provider clients, sync and async: thin senders over `provider.core.Core`.

    with ProviderClient(base_url, secret_key) as client:
        client.account_enquiry("0581234567", "058")

Only GETs are retried (on TransientError, with backoff and jitter, honouring a
429's Retry-After); a POST is sent once, and a lost answer surfaces as
ProviderTimeoutError or ProviderUnavailableError for the caller to resolve by
looking the reference up.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import httpx
import tenacity
from pydantic import SecretStr

from provider.answers import translated
from provider.async_client import AsyncProviderClient
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

__all__ = ["AsyncProviderClient", "ProviderClient"]

T = TypeVar("T")


class ProviderClient:
    """A blocking client for the provider's ten endpoints; safe to share between threads."""

    def __init__(
        self,
        base_url: str,
        secret_key: str | SecretStr,
        *,
        timeout: float = 10.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
        enquiry_cache_ttl: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
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
        self._http = httpx.Client(transport=transport, timeout=timeout, follow_redirects=False)

    def __repr__(self) -> str:
        return f"ProviderClient(base_url={self._core.base_url!r})"

    def __enter__(self) -> ProviderClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def _run(self, call: Call[T]) -> T:
        started = time.monotonic()
        if not self._core.may_retry(call):
            # The reconciler's client (max_retries=0) sends every lookup this way: a retry
            # loop per call is measurable at concurrency 32 (bench/RESULTS.md, section 2).
            try:
                once: T = self._send(call)
            except ProviderError as error:
                log_call(call, 1, started, error)
                raise
            log_call(call, 1, started, None)
            return once
        retrying = tenacity.Retrying(sleep=self._sleep, **self._core.retry_controls(call))
        try:
            result: T = retrying(self._send, call)
        except ProviderError as error:
            log_call(call, retrying.statistics["attempt_number"], started, error)
            raise
        log_call(call, retrying.statistics["attempt_number"], started, None)
        return result

    def _send(self, call: Call[T]) -> T:
        with translated(self._core.scrub, self._core.timeout):
            response = self._http.send(call.request)
        return call.interpret(response, self._core.scrub)

    def banks(self) -> list[Bank]:
        """Banks and the codes endpoints 8 and 9 accept."""
        return self._run(self._core.banks())

    def account_enquiry(self, account_number: str, bank_code: str) -> AccountEnquiry:
        """The account holder's name; answers are cached for `enquiry_cache_ttl` seconds."""
        call = self._core.account_enquiry(account_number, bank_code)
        cached = self._core.enquiries.get(call.cache_key)
        if cached is not None:
            return cached
        result = self._run(call)
        self._core.enquiries.put(call.cache_key, result)
        return result

    def initiate_transfer(
        self, *, amount: int, bank_code: str, account_number: str, reference: str
    ) -> TransferInitiation:
        """Start a payout; sent exactly once, never retried."""
        return self._run(
            self._core.initiate_transfer(
                amount=amount,
                bank_code=bank_code,
                account_number=account_number,
                reference=reference,
            )
        )

    def get_transaction(self, reference: str) -> Transaction:
        """A transaction by reference (the provider's or, on the sandbox, the merchant's)."""
        return self._run(self._core.get_transaction(reference))

    def get_collection(self, reference: str) -> Transaction:
        """The transaction of a collection, by the collection reference."""
        return self._run(self._core.get_collection(reference))

    def create_collection(
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
        return self._run(
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

    def create_virtual_account(
        self,
        *,
        type: str,
        customer: Customer | Mapping[str, Any],
        expected_amount: int | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> VirtualAccount:
        """Issue a static or dynamic virtual account for a customer."""
        return self._run(
            self._core.create_virtual_account(
                type=type, customer=customer, expected_amount=expected_amount, meta=meta
            )
        )

    def list_virtual_accounts(
        self,
        *,
        type: str | None = None,
        status: str | None = None,
        page: int = 1,
        per_page: int = 20,
    ) -> Page[VirtualAccount]:
        """One page of virtual accounts, optionally filtered."""
        return self._run(
            self._core.list_virtual_accounts(type=type, status=status, page=page, per_page=per_page)
        )

    def iter_virtual_accounts(
        self, *, type: str | None = None, status: str | None = None, per_page: int = 100
    ) -> Iterator[VirtualAccount]:
        """Every matching virtual account, fetching pages as needed."""
        # Build the first call now so bad arguments fail here, not on the first next().
        first = self._core.list_virtual_accounts(
            type=type, status=status, page=1, per_page=per_page
        )

        def pages() -> Iterator[VirtualAccount]:
            current = self._run(first)
            while True:
                yield from current.items
                if current.is_last:
                    return
                current = self.list_virtual_accounts(
                    type=type, status=status, page=current.page + 1, per_page=per_page
                )

        return pages()

    def get_virtual_account(self, uid: str) -> VirtualAccount:
        """One virtual account by uid."""
        return self._run(self._core.get_virtual_account(uid))

    def deactivate_virtual_account(self, uid: str) -> VirtualAccount:
        """Make a virtual account inactive."""
        return self._run(self._core.deactivate_virtual_account(uid))
