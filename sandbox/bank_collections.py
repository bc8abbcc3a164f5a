"""Bank-transfer collections (endpoints 5 and 6): issue an account, take a payment, expire."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sandbox.banks import ISSUING_BANK_CODE, bank_by_code
from sandbox.errors import ConflictError
from sandbox.faults import FEE_DRIFT_DELTA
from sandbox.fees import collection_fee
from sandbox.models import Collection, Status
from sandbox.nuban import make_nuban

EXPIRED = "Collection expired"


class CollectionBook:
    """Collections by provider reference; the caller (World) holds the lock and the wallet."""

    def __init__(self, clock: Callable[[], float], ttl: float) -> None:
        self._clock = clock
        self._ttl = ttl
        self._collections: dict[str, Collection] = {}

    def __contains__(self, reference: object) -> bool:
        return reference in self._collections

    def get(self, reference: str) -> Collection | None:
        """The collection with this provider reference (expiry applied), or None."""
        collection = self._collections.get(reference)
        if collection is not None:
            self._expire(collection)
        return collection

    def create(
        self,
        *,
        reference: str,
        merchant_reference: str,
        amount: int,
        customer: dict[str, str],
        meta: dict[str, Any],
        stuck: bool = False,
    ) -> Collection:
        """Issue a one-off account at the issuing bank, expiring after the TTL (`stuck`: an
        unpaid one stays pending past it, the `stuck_pending` fault)."""
        bank = bank_by_code(ISSUING_BANK_CODE)
        assert bank is not None
        now = self._clock()
        name = customer.get("customer_name")
        collection = Collection(
            reference=reference,
            merchant_reference=merchant_reference,
            amount=amount,
            fee_quoted=collection_fee(amount),
            account_number=make_nuban(bank.code, f"7{len(self._collections) + 1:08d}"),
            account_name=f"SANDBOX CHECKOUT - {name}" if name else "SANDBOX CHECKOUT",
            bank_name=bank.name,
            created_at=now,
            expires_at=now + self._ttl,
            customer=customer,
            meta=meta,
            stuck=stuck,
        )
        self._collections[reference] = collection
        return collection

    def pay(
        self,
        collection: Collection,
        amount: int,
        faults: frozenset[str] = frozenset(),
        late_seconds: float = 0.0,
    ) -> int:
        """Apply a payment; return the kobo to credit to the wallet.

        Paid in full or more: successful, credit = amount paid - fee on it.
        Less: failed with the reason (the money is treated as returned), credit 0; the
        lookup reports the amount received.
        Expired or no longer pending: 409.
        `faults`: `collection_late` records the payment `late_seconds` after the expiry (the
        bank reported it late); `fee_drift` charges the quoted fee + 500 kobo.
        """
        self._expire(collection)
        if collection.status is not Status.PENDING:
            if collection.failure_reason == EXPIRED:
                raise ConflictError(EXPIRED)
            raise ConflictError(f"Collection is already {collection.status.value}")
        collection.completed_at = self._clock()
        if "collection_late" in faults:
            collection.completed_at = collection.expires_at + max(late_seconds, 1.0)
        collection.faults = sorted(faults)
        if amount < collection.amount:
            collection.status = Status.FAILED
            collection.amount_paid = amount
            collection.failure_reason = (
                f"Underpaid: expected {collection.amount} kobo, received {amount} kobo"
            )
            return 0
        fee = collection_fee(amount)
        if "fee_drift" in faults:
            fee += FEE_DRIFT_DELTA
        collection.status = Status.SUCCESSFUL
        collection.amount_paid, collection.fee_charged = amount, fee
        return amount - fee

    def _expire(self, collection: Collection) -> None:
        if collection.stuck:
            return
        if collection.status is Status.PENDING and self._clock() > collection.expires_at:
            collection.status = Status.FAILED
            collection.failure_reason = EXPIRED
            collection.completed_at = collection.expires_at
