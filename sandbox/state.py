"""The in-memory world of one sandbox: wallet, transfers, collections, faults, webhook log.

Pure and lock-protected: no HTTP and no asyncio here. The app's handlers and
background tasks call these methods; unit tests call them with a fake clock.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sandbox.accounts import Behaviour, find_account
from sandbox.bank_collections import CollectionBook
from sandbox.banks import bank_by_code
from sandbox.config import SandboxConfig
from sandbox.enquiry import EnquiryLimiter, enquire
from sandbox.errors import (
    ConflictError,
    NotFoundError,
    RateLimitedError,
    RefusalError,
)
from sandbox.faults import (
    COLLECTION_CREATE_FAULTS,
    COLLECTION_FAULTS,
    FAIL_RATE_REASON,
    FEE_DRIFT_DELTA,
    TAMPER_AMOUNT_DELTA,
    TAMPER_FEE_DELTA,
    Dice,
    Faults,
    decide_transfer_faults,
)
from sandbox.fees import transfer_fee
from sandbox.models import (
    Collection,
    EventType,
    Status,
    Transfer,
    WebhookAttempt,
    WebhookEvent,
)
from sandbox.virtual_accounts import VirtualAccounts
from sandbox.whitelist import Whitelist

TRANSACTION_NOT_FOUND = "Transaction not found"
FORCED_FAILURE_REASON = "Transfer failed"
_WEBHOOK_FAULTS = frozenset(
    {"webhook_drop", "webhook_duplicate", "webhook_delay", "webhook_reorder"}
)


class World:
    """Everything one emulator remembers; `config` holds its keys and otp."""

    def __init__(self, config: SandboxConfig, *, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.clock = clock
        self.seed = config.seed if config.seed is not None else secrets.randbits(32)
        self._lock = threading.RLock()
        self._balance = config.wallet_balance
        self._webhook_url = config.webhook_url
        self._faults = config.faults
        self._dice = Dice(self._fault_seed())
        self._transfers: dict[str, Transfer] = {}
        self._collections = CollectionBook(clock, config.collection_ttl)
        self._merchant_refs: dict[str, str] = {}  # merchant reference → provider reference
        self._schedule: list[tuple[float, int, str]] = []
        self._sequence = itertools.count()
        self._attempts: list[WebhookAttempt] = []
        self._injected: Counter[str] = Counter()
        self._limiter = EnquiryLimiter(clock)
        self.whitelist = Whitelist(clock)
        self.virtual_accounts = VirtualAccounts(clock, self.seed)

    # -- wallet, webhook URL, faults ------------------------------------------------

    @property
    def balance(self) -> int:
        """The wallet balance in kobo."""
        return self._balance

    def set_balance(self, balance: int) -> None:
        """Set the wallet balance (control route)."""
        with self._lock:
            self._balance = balance

    @property
    def webhook_url(self) -> str | None:
        """Where transfer webhooks go, or None when not configured."""
        return self._webhook_url

    def set_webhook_url(self, url: str | None) -> None:
        """Set or clear the webhook URL."""
        self._webhook_url = url

    @property
    def faults(self) -> Faults:
        """The active fault set."""
        return self._faults

    def set_faults(self, faults: Faults) -> None:
        """Replace the fault set; per-request dice restart from its seed."""
        with self._lock:
            self._faults = faults
            self._dice = Dice(self._fault_seed())

    def roll(self, key: str) -> bool:
        """Roll a per-request fault (probability from the active set); count hits."""
        hit = self._dice.roll(float(getattr(self._faults, key)))
        if hit:
            self.count_injected(key)
        return hit

    def count_injected(self, key: str) -> None:
        """Count one injection of a per-request fault."""
        with self._lock:
            self._injected[key] += 1

    def injected(self) -> dict[str, int]:
        """How often each per-request fault was injected."""
        with self._lock:
            return dict(self._injected)

    def _fault_seed(self) -> int:
        return self._faults.seed if self._faults.seed is not None else self.seed

    # -- transfers --------------------------------------------------------------------

    def initiate_transfer(
        self, *, amount: int, bank_code: str, account_number: str, reference: str
    ) -> Transfer:
        """Accept a transfer (debiting amount + fee) or raise the first refusal cause.

        Order: webhook configured, duplicate reference, bank code, account, balance.
        """
        with self._lock:
            if self._webhook_url is None:
                raise RefusalError("Webhook not configured")
            if reference in self._merchant_refs:
                raise RefusalError("Duplicate reference")
            if bank_by_code(bank_code) is None:
                raise RefusalError("Invalid bank code")
            account = find_account(bank_code, account_number)
            if account is None or account.behaviour is Behaviour.ENQUIRY_FAILS:
                raise RefusalError("Account not found")
            fee = transfer_fee(amount)
            if self._balance < amount + fee:
                raise RefusalError("Insufficient funds")
            faults = set(decide_transfer_faults(self._faults, self._fault_seed(), reference))
            if account.behaviour is Behaviour.FAILS_AFTER_PENDING:
                faults.discard("fail_rate")  # it fails anyway; the fault changes nothing
                planned, reason = Status.FAILED, account.failure_reason
            elif "fail_rate" in faults:
                planned, reason = Status.FAILED, FAIL_RATE_REASON
            else:
                planned, reason = Status.SUCCESSFUL, None
            now = self.clock()
            transfer = Transfer(
                reference=self._new_reference("TRF_", reference),
                merchant_reference=reference,
                amount=amount,
                bank_code=bank_code,
                account_number=account_number,
                account_name=account.account_name,
                fee_quoted=fee,
                fee_charged=fee,
                created_at=now,
                planned_status=planned,
                planned_reason=reason,
                faults=frozenset(faults),
            )
            self._balance -= amount + fee
            self._transfers[transfer.reference] = transfer
            self._merchant_refs[reference] = transfer.reference
            never = account.behaviour is Behaviour.STAYS_PENDING or "stuck_pending" in faults
            if self.config.complete_after is not None and not never:
                due = now + self.config.complete_after
                heapq.heappush(self._schedule, (due, next(self._sequence), transfer.reference))
            return transfer

    def next_due(self) -> float | None:
        """When the earliest scheduled completion is due, or None."""
        with self._lock:
            return self._schedule[0][0] if self._schedule else None

    def complete_due(self, now: float) -> list[WebhookEvent]:
        """Complete every transfer whose time has come; return the webhooks to send."""
        events: list[WebhookEvent] = []
        with self._lock:
            while self._schedule and self._schedule[0][0] <= now:
                _, _, reference = heapq.heappop(self._schedule)
                transfer = self._transfers[reference]
                if transfer.status is Status.PENDING:  # it may have been forced already
                    status, reason = transfer.planned_status, transfer.planned_reason
                    events.append(self._complete(transfer, status, reason))
        return events

    def force_complete(self, reference: str, status: Status, reason: str | None) -> WebhookEvent:
        """Complete a pending transfer now with the given outcome (control route)."""
        with self._lock:
            transfer = self._find_transfer(reference)
            if transfer is None:
                raise NotFoundError("Transfer not found")
            if transfer.status is not Status.PENDING:
                raise ConflictError(f"Transfer is already {transfer.status.value}")
            transfer.forced = True
            if status is Status.FAILED:
                reason = reason or transfer.planned_reason or FORCED_FAILURE_REASON
            return self._complete(transfer, status, reason if status is Status.FAILED else None)

    def _complete(self, transfer: Transfer, status: Status, reason: str | None) -> WebhookEvent:
        faults = set(transfer.faults)
        if "fee_drift" in faults:
            # The provider charges a different fee than it quoted; the wallet follows.
            transfer.fee_charged = transfer.fee_quoted + FEE_DRIFT_DELTA
            self._balance -= FEE_DRIFT_DELTA
        if status is Status.FAILED:
            self._balance += transfer.amount  # the amount comes back, the fee does not (spec)
            faults -= {"tamper_amount", "tamper_fee"}  # a failed webhook carries neither
        transfer.status = status
        transfer.failure_reason = reason
        transfer.completed_at = self.clock()
        transfer.faults = frozenset(faults)
        if status is Status.SUCCESSFUL:
            amount = transfer.amount + (TAMPER_AMOUNT_DELTA if "tamper_amount" in faults else 0)
            fee = transfer.fee_charged + (TAMPER_FEE_DELTA if "tamper_fee" in faults else 0)
            transfer.webhook_amount, transfer.webhook_fee = amount, fee
            event = EventType.TRANSFER_SUCCESS
            data: dict[str, Any] = {
                "reference": transfer.reference,
                "merchant_reference": transfer.merchant_reference,
                "amount": amount,
                "status": status.value,
                "fee": fee,
            }
        else:
            event = EventType.TRANSFER_FAILED
            data = {
                "reference": transfer.reference,
                "merchant_reference": transfer.merchant_reference,
                "status": status.value,
                "failure_reason": reason,
            }
        delay = self._faults.webhook_delay_seconds if "webhook_delay" in faults else 0.0
        delivery_faults = frozenset(faults & (_WEBHOOK_FAULTS | {"tamper_amount", "tamper_fee"}))
        return WebhookEvent(
            event, data, transfer.reference, transfer.merchant_reference, delivery_faults, delay
        )

    def transfers(self) -> list[dict[str, Any]]:
        """Every transfer with its whole truth (GET /_sandbox/transfers)."""
        with self._lock:
            return [t.inspect() for t in self._transfers.values()]

    def transfer_view(self, reference: str) -> dict[str, Any]:
        """One transfer's whole truth by either reference, else 404."""
        with self._lock:
            transfer = self._find_transfer(reference)
            if transfer is None:
                raise NotFoundError("Transfer not found")
            return transfer.inspect()

    def _find_transfer(self, reference: str) -> Transfer | None:
        found = self._transfers.get(reference)
        if found is None and reference in self._merchant_refs:
            found = self._transfers.get(self._merchant_refs[reference])
        return found

    def _new_reference(self, prefix: str, merchant_reference: str) -> str:
        for salt in itertools.count():
            text = f"{self.seed}:{prefix}:{merchant_reference}:{salt}"
            candidate = prefix + hashlib.sha256(text.encode()).hexdigest()[:16].upper()
            if candidate not in self._transfers and candidate not in self._collections:
                return candidate
        raise AssertionError("unreachable")

    # -- collections ------------------------------------------------------------------

    def create_collection(
        self, *, reference: str, amount: int, customer: dict[str, str], meta: dict[str, Any]
    ) -> Collection:
        """Issue a one-off account to pay `amount` into; the reference must be new."""
        with self._lock:
            if reference in self._merchant_refs:
                raise RefusalError("Duplicate reference")
            # Its own stream (not the payment's), so the two decisions are independent.
            stuck = decide_transfer_faults(
                self._faults, self._fault_seed(), f"{reference}#create", COLLECTION_CREATE_FAULTS
            )
            collection = self._collections.create(
                reference=self._new_reference("COL_", reference),
                merchant_reference=reference,
                amount=amount,
                customer=customer,
                meta=meta,
                stuck=bool(stuck),
            )
            self._merchant_refs[reference] = collection.reference
            return collection

    def pay_collection(self, reference: str, amount: int) -> Collection:
        """A customer pays `amount` into the collection's account (see CollectionBook.pay)."""
        with self._lock:
            collection = self._find_collection(reference)
            if collection is None:
                raise NotFoundError("Collection not found")
            faults = decide_transfer_faults(
                self._faults,
                self._fault_seed(),
                collection.merchant_reference,
                COLLECTION_FAULTS,
            )
            self._balance += self._collections.pay(
                collection, amount, faults, self._faults.collection_late_seconds
            )
            return collection

    def _find_collection(self, reference: str) -> Collection | None:
        found = self._collections.get(reference)
        if found is None and reference in self._merchant_refs:
            found = self._collections.get(self._merchant_refs[reference])
        return found

    # -- lookups and enquiry ------------------------------------------------------------

    def transaction(self, reference: str) -> dict[str, Any]:
        """A transfer's or collection's transaction by either reference, else 404."""
        with self._lock:
            transfer = self._find_transfer(reference)
            if transfer is not None:
                return transfer.transaction()
            return self.collection_transaction(reference)

    def collection_transaction(self, reference: str) -> dict[str, Any]:
        """A collection's transaction by either reference, else 404."""
        with self._lock:
            collection = self._find_collection(reference)
            if collection is None:
                raise NotFoundError(TRANSACTION_NOT_FOUND)
            return collection.transaction()

    def enquire(self, bank_code: str, account_number: str) -> dict[str, str]:
        """Answer an enquiry, counting it against the rate-limit fault first."""
        try:
            self._limiter.admit(bank_code, account_number, self._faults.enquiry_rate_limit)
        except RateLimitedError:
            self.count_injected("enquiry_rate_limit")
            raise
        return enquire(bank_code, account_number)

    # -- webhook log --------------------------------------------------------------------

    def record_attempt(self, attempt: WebhookAttempt) -> WebhookAttempt:
        """Append a delivery attempt to the log (its id is assigned here)."""
        with self._lock:
            recorded = replace(attempt, id=len(self._attempts) + 1)
            self._attempts.append(recorded)
            return recorded

    def attempts(self) -> list[WebhookAttempt]:
        """Every webhook attempt so far, oldest first."""
        with self._lock:
            return list(self._attempts)
