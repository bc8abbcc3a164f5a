"""The I/O-free core both clients share: it builds requests and knows how to read answers.

Each endpoint method validates its arguments (raising ProviderRequestError before
anything is sent) and returns a `Call`: the `httpx.Request`, how to parse the
answer, and whether it may be retried. The sync and async clients only send.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx
import tenacity
from pydantic import BaseModel, SecretStr, StrictInt

from provider import validation as check
from provider.answers import interpret
from provider.cache import TTLCache
from provider.errors import ProviderError, ProviderRequestError, TransientError
from provider.logs import get_logger
from provider.models import (
    AccountEnquiry,
    Bank,
    Collection,
    Customer,
    Page,
    Transaction,
    TransferInitiation,
    VirtualAccount,
    VirtualAccountStatus,
    VirtualAccountType,
)
from provider.nuban import is_valid_nuban
from provider.retry import RetryPolicy

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
REDACTED = "[redacted]"
USER_AGENT = "payrecon-provider/1"

logger = get_logger(__name__)


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request to make, and how to turn its answer into a `T`."""

    request: httpx.Request
    parse: Callable[[dict[str, Any]], T]
    retryable: bool  # only GETs: see RetryPolicy for why a POST never is
    endpoint: str  # the spec's path template, for logs (no references, no key)
    cache_key: tuple[str, str] | None = None

    def interpret(self, response: httpx.Response, scrub: Callable[[str], str]) -> T:
        """The typed result of `response`, or the mapped ProviderError."""
        return interpret(response, self.parse, scrub)


class _PageMeta(BaseModel):
    page: StrictInt
    per_page: StrictInt
    total: StrictInt


def _one(model: type[M]) -> Callable[[dict[str, Any]], M]:
    return lambda payload: model.model_validate(payload["data"])


def _many(model: type[M]) -> Callable[[dict[str, Any]], list[M]]:
    def parse(payload: dict[str, Any]) -> list[M]:
        data = payload["data"]
        if not isinstance(data, list):
            raise TypeError("data is not a list")
        return [model.model_validate(item) for item in data]

    return parse


def _page(payload: dict[str, Any]) -> Page[VirtualAccount]:
    meta = _PageMeta.model_validate(payload["meta"])
    items = _many(VirtualAccount)(payload)
    return Page(items=items, page=meta.page, per_page=meta.per_page, total=meta.total)


def _secret(value: str | SecretStr) -> str:
    text = value.get_secret_value() if isinstance(value, SecretStr) else value
    if not isinstance(text, str) or not text or not text.isprintable() or " " in text:
        # Never echo it: a malformed key may still be most of a real one.
        raise ProviderRequestError("secret key is empty or malformed")
    return text


def _base_url(value: str) -> str:
    try:
        url = httpx.URL(value)
    except (httpx.InvalidURL, TypeError) as exc:
        raise ProviderRequestError("base URL is not a valid URL") from exc
    if url.scheme not in {"http", "https"} or not url.host:
        raise ProviderRequestError("base URL must be an http:// or https:// address")
    return str(url).rstrip("/")


class Core:
    """Request building, answer reading, retry timing and the enquiry cache; no I/O."""

    def __init__(
        self,
        base_url: str,
        secret_key: str | SecretStr,
        *,
        timeout: float,
        max_retries: int,
        backoff: float,
        enquiry_cache_ttl: float,
        clock: Callable[[], float] | None = None,
        rand: Callable[[], float] | None = None,
    ) -> None:
        if not timeout > 0 or max_retries < 0 or backoff < 0:
            raise ProviderRequestError("timeout must be > 0, max_retries and backoff >= 0")
        self.base_url = _base_url(base_url)
        self._secret = _secret(secret_key)
        self.timeout = float(timeout)
        self._timeouts = httpx.Timeout(self.timeout).as_dict()
        self.policy = RetryPolicy(max_retries=max_retries, backoff=backoff)
        self.enquiries: TTLCache[AccountEnquiry] = TTLCache(
            enquiry_cache_ttl, clock or time.monotonic
        )
        self._rand = rand or random.random

    def __repr__(self) -> str:
        return f"Core(base_url={self.base_url!r})"

    def scrub(self, text: str) -> str:
        """`text` with the secret key replaced, for anything that may reach a message."""
        return text.replace(self._secret, REDACTED)

    def may_retry(self, call: Call[Any]) -> bool:
        """False when `call` is sent exactly once (a POST, or a client with no retries): the
        clients then send it directly, without building a retry loop per call."""
        return call.retryable and self.policy.max_retries > 0

    def retry_controls(self, call: Call[Any]) -> dict[str, Any]:
        """tenacity's arguments for sending `call`: a GET as the policy says, a POST once."""
        controls = self.policy.controls(self._rand, functools.partial(log_retry, call))
        if not call.retryable:
            controls["retry"] = tenacity.retry_never
        return controls

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: dict[str, Any] | None = None,
    ) -> httpx.Request:
        headers = {
            # Spec, Authentication 1: every request carries the bearer key.
            "Authorization": f"Bearer {self._secret}",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }
        try:
            return httpx.Request(
                method,
                self.base_url + path,
                params=dict(params) if params else None,
                json=body,
                headers=headers,
                # Explicit timeouts: a request built outside a client carries none otherwise.
                extensions={"timeout": self._timeouts},
            )
        except (TypeError, ValueError) as exc:
            raise ProviderRequestError(f"request cannot be encoded as JSON: {exc}") from exc

    def _get(
        self, path: str, parse: Callable[[dict[str, Any]], T], endpoint: str, **params: Any
    ) -> Call[T]:
        query = {k: v for k, v in params.items() if v is not None}
        return Call(self._request("GET", path, params=query), parse, True, endpoint)

    def _post(
        self, path: str, parse: Callable[[dict[str, Any]], T], endpoint: str, body: Any = None
    ) -> Call[T]:
        return Call(self._request("POST", path, body=body), parse, False, endpoint)

    # -- the ten endpoints (spec, Endpoints) -------------------------------------------

    def banks(self) -> Call[list[Bank]]:
        """Endpoint 10."""
        return self._get("/v1/banks", _many(Bank), "GET /v1/banks")

    def account_enquiry(self, account_number: str, bank_code: str) -> Call[AccountEnquiry]:
        """Endpoint 9; its answer is cached by (account_number, bank_code)."""
        number = check.account_number(account_number)
        code = check.bank_code(bank_code)
        self._warn_nuban(number, code)
        call = self._get(
            "/v1/account-enquiry",
            _one(AccountEnquiry),
            "GET /v1/account-enquiry",
            account_number=number,
            bank_code=code,
        )
        return Call(call.request, call.parse, True, call.endpoint, cache_key=(number, code))

    def initiate_transfer(
        self, *, amount: int, bank_code: str, account_number: str, reference: str
    ) -> Call[TransferInitiation]:
        """Endpoint 8: never retried."""
        number = check.account_number(account_number)
        code = check.bank_code(bank_code)
        body = {
            "amount": check.kobo(amount),
            "bank_code": code,
            "account_number": number,
            "reference": check.reference(reference),
        }
        self._warn_nuban(number, code)
        return self._post(
            "/v1/transfer/initiate", _one(TransferInitiation), "POST /v1/transfer/initiate", body
        )

    def get_transaction(self, reference: str) -> Call[Transaction]:
        """Endpoint 7."""
        path = "/v1/transaction/" + check.path_segment(reference)
        return self._get(path, _one(Transaction), "GET /v1/transaction/{reference}")

    def get_collection(self, reference: str) -> Call[Transaction]:
        """Endpoint 6."""
        path = "/v1/collection/" + check.path_segment(reference)
        return self._get(path, _one(Transaction), "GET /v1/collection/{reference}")

    def create_collection(
        self,
        *,
        reference: str,
        amount: int,
        customer_name: str | None,
        customer_email: str | None,
        customer_phone: str | None,
        meta: Mapping[str, Any] | None,
        currency: str,
    ) -> Call[Collection]:
        """Endpoint 5."""
        body: dict[str, Any] = {
            "currency": check.currency(currency),
            "reference": check.reference(reference),
            "amount": check.kobo(amount),
            "customer_name": check.optional_text(customer_name, name="customer_name"),
            "customer_email": check.optional_text(customer_email, name="customer_email"),
            "customer_phone": check.optional_text(customer_phone, name="customer_phone"),
            "meta": check.mapping(meta, name="meta"),
        }
        body = {k: v for k, v in body.items() if v is not None}
        return self._post(
            "/v1/collection/bank-transfer",
            _one(Collection),
            "POST /v1/collection/bank-transfer",
            body,
        )

    def create_virtual_account(
        self,
        *,
        type: str,
        customer: Customer | Mapping[str, Any],
        expected_amount: int | None,
        meta: Mapping[str, Any] | None,
    ) -> Call[VirtualAccount]:
        """Endpoint 1 (answers 201)."""
        body: dict[str, Any] = {
            "type": check.choice(type, VirtualAccountType, name="type").value,
            "customer": check.mapping(customer, name="customer"),
        }
        if body["customer"] is None:
            raise ProviderRequestError("customer is required")
        if expected_amount is not None:
            body["expected_amount"] = check.kobo(expected_amount, name="expected_amount")
        if meta is not None:
            body["meta"] = check.mapping(meta, name="meta")
        return self._post(
            "/v1/virtual-accounts", _one(VirtualAccount), "POST /v1/virtual-accounts", body
        )

    def list_virtual_accounts(
        self, *, type: str | None, status: str | None, page: int, per_page: int
    ) -> Call[Page[VirtualAccount]]:
        """Endpoint 2, one page (docs/rules.md fixes `?type=&status=&page=&per_page=`)."""
        return self._get(
            "/v1/virtual-accounts",
            _page,
            "GET /v1/virtual-accounts",
            type=None if type is None else check.choice(type, VirtualAccountType, name="type"),
            status=(
                None
                if status is None
                else check.choice(status, VirtualAccountStatus, name="status")
            ),
            page=check.page(page),
            per_page=check.page(per_page, name="per_page", maximum=check.MAX_PER_PAGE),
        )

    def get_virtual_account(self, uid: str) -> Call[VirtualAccount]:
        """Endpoint 3."""
        path = "/v1/virtual-accounts/" + check.path_segment(uid, name="uid")
        return self._get(path, _one(VirtualAccount), "GET /v1/virtual-accounts/{uid}")

    def deactivate_virtual_account(self, uid: str) -> Call[VirtualAccount]:
        """Endpoint 4 (no body)."""
        path = "/v1/virtual-accounts/" + check.path_segment(uid, name="uid") + "/deactivate"
        return self._post(path, _one(VirtualAccount), "POST /v1/virtual-accounts/{uid}/deactivate")

    def _warn_nuban(self, account_number: str, bank_code: str) -> None:
        # A hint only: the provider decides (spec, Errors), so this never refuses.
        if is_valid_nuban(account_number, bank_code) is False:
            logger.warning(
                "provider.nuban_check_failed", account_number=account_number, bank_code=bank_code
            )


def log_call(call: Call[Any], attempts: int, started: float, error: ProviderError | None) -> None:
    """Log the one line a call gets, whatever happened."""
    # The endpoint template, not the URL: it is what dashboards group by.
    # Debug: the caller (reconciler pass, CLI command) owns the canonical line.
    logger.debug(
        "provider.call",
        endpoint=call.endpoint,
        attempts=attempts,
        elapsed_ms=round((time.monotonic() - started) * 1000, 1),
        outcome="ok" if error is None else type(error).__name__,
        status_code=None if error is None else error.status_code,
    )


def log_retry(call: Call[Any], attempt: int, error: TransientError, delay: float) -> None:
    """Log a retry about to happen."""
    logger.warning(
        "provider.retry",
        endpoint=call.endpoint,
        attempt=attempt + 1,
        error=type(error).__name__,
        delay_s=round(delay, 3),
    )
