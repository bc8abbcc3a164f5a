"""The registry of merchant-issued virtual accounts (endpoints 1-4)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any

from sandbox.banks import ISSUING_BANK_CODE, bank_by_code
from sandbox.errors import NotFoundError
from sandbox.models import VirtualAccount
from sandbox.nuban import make_nuban

NOT_FOUND = "Virtual account not found"


def _account_name(customer: dict[str, str]) -> str:
    name = " ".join(p for p in (customer.get("first_name"), customer.get("last_name")) if p)
    return name.strip() or customer.get("reference") or "SANDBOX CUSTOMER"


class VirtualAccounts:
    """Virtual accounts by uid, in creation order."""

    def __init__(self, clock: Callable[[], float], seed: int) -> None:
        self._clock = clock
        self._seed = seed
        self._lock = threading.Lock()
        self._accounts: dict[str, VirtualAccount] = {}

    def create(
        self,
        type_: str,
        customer: dict[str, str],
        expected_amount: int | None,
        meta: dict[str, Any],
    ) -> VirtualAccount:
        """Issue a new active account (arguments already validated)."""
        bank = bank_by_code(ISSUING_BANK_CODE)
        assert bank is not None
        with self._lock:
            n = len(self._accounts) + 1
            digest = hashlib.sha256(f"{self._seed}:va:{n}".encode()).hexdigest()
            account = VirtualAccount(
                uid=f"va_{digest[:16]}",
                type=type_,
                account_number=make_nuban(bank.code, f"8{n:08d}"),
                account_name=_account_name(customer),
                bank_name=bank.name,
                customer=dict(customer),
                expected_amount=expected_amount,
                meta=meta,
                created_at=self._clock(),
            )
            self._accounts[account.uid] = account
            return account

    def get(self, uid: str) -> VirtualAccount:
        """The account with this uid, else 404."""
        with self._lock:
            account = self._accounts.get(uid)
        if account is None:
            raise NotFoundError(NOT_FOUND)
        return account

    def page(
        self, *, type_: str | None, status: str | None, page: int, per_page: int
    ) -> tuple[list[VirtualAccount], int]:
        """One page of the accounts matching the filters, and how many match in all."""
        with self._lock:
            matching = [
                a
                for a in self._accounts.values()
                if (type_ is None or a.type == type_) and (status is None or a.status == status)
            ]
        start = (page - 1) * per_page
        return matching[start : start + per_page], len(matching)

    def deactivate(self, uid: str) -> VirtualAccount:
        """Make the account inactive; doing it again is harmless (idempotent)."""
        with self._lock:
            account = self._accounts.get(uid)
            if account is None:
                raise NotFoundError(NOT_FOUND)
            account.status = "inactive"
            return account
