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
from datetime import date
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
    REVERSAL_REASON,
    STATEMENT_FAULTS,
    STATEMENT_FEE_DRIFT_DELTA,
    TAMPER_AMOUNT_DELTA,
    TAMPER_FEE_DELTA,
    Dice,
    Faults,
    decide_reversal,
    decide_transfer_faults,
    outside_payout_amount,
)
from sandbox.fees import transfer_fee
from sandbox.journal import (
    BANK_ACCOUNT,
    BANK_OPENING_BALANCE,
    MERCHANT_BANK_ACCOUNT_NUMBER,
    WALLET_ACCOUNT,
    Direction,
    Journal,
    Kind,
    Movement,
    Statement,
    lagos_day,
)
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
# The account a payout made outside payrecon goes to (statement_unknown_debit): Zenith Bank.
_OUTSIDE_PAYEE = ("057", "0570000015")


class World:
    """Everything one emulator remembers; `config` holds its keys and otp."""

    def __init__(self, config: SandboxConfig, *, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.clock = clock
        self.seed = config.seed if config.seed is not None else secrets.randbits(32)
        self._lock = threading.RLock()
        self._wallet = Journal(WALLET_ACCOUNT, config.wallet_balance)
        self._bank = Journal(BANK_ACCOUNT, BANK_OPENING_BALANCE)
        self._webhook_url = config.webhook_url
        self._faults = config.faults
        self._dice = Dice(self._fault_seed())
        self._transfers: dict[str, Transfer] = {}
        self._collections = CollectionBook(clock, config.collection_ttl)
        self._merchant_refs: dict[str, str] = {}  # merchant reference → provider reference
        self._schedule: list[tuple[float, int, str]] = []
        self._reversals: list[tuple[float, int, str]] = []  # the reverse_after_success fault
        self._issued: set[str] = set()  # every provider reference handed out
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
        return self._wallet.balance

    def set_balance(self, balance: int) -> None:
        """Set the wallet balance (control route); the journal records the difference as an
        adjustment, so it still adds up to the balance."""
        with self._lock:
            if balance == self._wallet.balance:
                return
            self._post(
                Kind.ADJUSTMENT,
                Direction.CREDIT,
                balance - self._wallet.balance,
                self._new_reference("ADJ_", f"adjustment:{next(self._sequence)}"),
                "Balance set by sandbox control",
            )

    def _post(
        self, kind: Kind, direction: Direction, amount: int, reference: str, narration: str
    ) -> Movement | None:
        """Move the wallet, recording the movement in its journal (caller holds the lock)."""
        return self._wallet.post(
            time=self.clock(),
            kind=kind,
            direction=direction,
            amount=amount,
            reference=reference,
            narration=narration,
        )

    def fund(self, amount: int) -> Movement:
        """Top up the wallet from the merchant's bank account: a funding credit on the wallet
        and the same debit, with the same reference, on the bank account."""
        with self._lock:
            reference = self._new_reference("FND_", f"funding:{next(self._sequence)}")
            movement = self._post(
                Kind.FUNDING,
                Direction.CREDIT,
                amount,
                reference,
                f"Funding from bank account {MERCHANT_BANK_ACCOUNT_NUMBER}",
            )
            self._bank.post(
                time=movement.time if movement else self.clock(),
                kind=Kind.FUNDING,
                direction=Direction.DEBIT,
                amount=amount,
                reference=reference,
                narration="Transfer to provider wallet",
            )
            assert movement is not None  # amount > 0 (the route checks it)
            return movement

    def movements(self) -> list[Movement]:
        """Every wallet movement so far, oldest first."""
        with self._lock:
            return self._wallet.movements()

    def wallet_statement(self, since: date | None, until: date | None) -> Statement:
        """The wallet's statement for a range of Lagos days (statement_drop_line applied)."""
        with self._lock:
            today = lagos_day(self.clock())
            drop = self._faults.statement_drop_line
            return self._wallet.statement(since, until, today=today, drop=drop)

    def bank_statement(self, since: date | None, until: date | None) -> Statement:
        """The merchant's bank account statement (its fundings of the wallet)."""
        with self._lock:
            return self._bank.statement(since, until, today=lagos_day(self.clock()))

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
            if self._wallet.balance < amount + fee:
                raise RefusalError("Insufficient funds")
            faults = set(decide_transfer_faults(self._faults, self._fault_seed(), reference))
            statement_faults = decide_transfer_faults(
                self._faults, self._fault_seed(), f"{reference}#statement", STATEMENT_FAULTS
            )
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
                faults=frozenset(faults | (statement_faults - {"statement_unknown_debit"})),
            )
            self._transfers[transfer.reference] = transfer
            self._merchant_refs[reference] = transfer.reference
            self._debit_payout(transfer, bank_code, account_number)
            if "statement_unknown_debit" in statement_faults:
                self._outside_payout(reference)
            never = account.behaviour is Behaviour.STAYS_PENDING or "stuck_pending" in faults
            if self.config.complete_after is not None and not never:
                due = now + self.config.complete_after
                heapq.heappush(self._schedule, (due, next(self._sequence), transfer.reference))
            return transfer

    def _debit_payout(self, transfer: Transfer, bank_code: str, account_number: str) -> None:
        """The payout's two wallet lines: the amount, then the fee charged.

        The fee line is what the wallet really loses: with `fee_drift` the drifted fee (the
        lookup answers it too, once completed), with `statement_fee_drift` 500 kobo more than
        the lookup will ever answer.
        """
        bank = bank_by_code(bank_code)
        bank_name = bank.name if bank else bank_code
        fee = transfer.fee_quoted
        if "fee_drift" in transfer.faults:
            fee += FEE_DRIFT_DELTA
        if "statement_fee_drift" in transfer.faults:
            fee += STATEMENT_FEE_DRIFT_DELTA
        narration = f"Transfer to {account_number} {bank_name} / {transfer.merchant_reference}"
        self._post(Kind.PAYOUT, Direction.DEBIT, transfer.amount, transfer.reference, narration)
        self._post(
            Kind.PAYOUT_FEE, Direction.DEBIT, fee, transfer.reference, f"Fee: {transfer.reference}"
        )

    def _outside_payout(self, merchant_reference: str) -> None:
        """statement_unknown_debit: someone pays out from the provider's dashboard, so the
        wallet really loses the money under a TRF_ reference payrecon never saw."""
        seed = self._fault_seed()
        amount = outside_payout_amount(seed, merchant_reference)
        fee = transfer_fee(amount)
        if self._wallet.balance < amount + fee:
            return  # the provider would refuse it too
        outside_reference = f"DASHBOARD-{merchant_reference}"
        reference = self._new_reference("TRF_", outside_reference)
        bank_code, account_number = _OUTSIDE_PAYEE
        bank = bank_by_code(bank_code)
        assert bank is not None
        narration = f"Transfer to {account_number} {bank.name} / {outside_reference}"
        self._post(Kind.OUTSIDE_PAYOUT, Direction.DEBIT, amount, reference, narration)
        self._post(Kind.OUTSIDE_PAYOUT_FEE, Direction.DEBIT, fee, reference, f"Fee: {reference}")

    def next_due(self) -> float | None:
        """When the earliest scheduled completion or reversal is due, or None."""
        with self._lock:
            dues = [queue[0][0] for queue in (self._schedule, self._reversals) if queue]
            return min(dues) if dues else None

    def complete_due(self, now: float) -> list[WebhookEvent]:
        """Complete (or reverse) every transfer whose time has come; return the webhooks to
        send."""
        events: list[WebhookEvent] = []
        with self._lock:
            while self._schedule and self._schedule[0][0] <= now:
                _, _, reference = heapq.heappop(self._schedule)
                transfer = self._transfers[reference]
                if transfer.status is Status.PENDING:  # it may have been forced already
                    status, reason = transfer.planned_status, transfer.planned_reason
                    events.append(self._complete(transfer, status, reason))
            while self._reversals and self._reversals[0][0] <= now:
                _, _, reference = heapq.heappop(self._reversals)
                transfer = self._transfers[reference]
                if transfer.status is Status.SUCCESSFUL:  # it may have been reversed by hand
                    dropped = "reverse_webhook_dropped" in transfer.faults
                    extra = frozenset({"webhook_drop"}) if dropped else frozenset()
                    events.append(self._reverse(transfer, REVERSAL_REASON, extra_faults=extra))
        return events

    def reverse(self, reference: str, reason: str, *, webhook: bool) -> WebhookEvent | None:
        """Reverse a successful transfer now (control route): its lookup answers failed with
        the reason and the wallet gets the amount back (the fee stays charged). Returns the
        `transfer.failed` webhook to send when `webhook`, else None."""
        with self._lock:
            transfer = self._find_transfer(reference)
            if transfer is None:
                raise NotFoundError("Transfer not found")
            if transfer.status is not Status.SUCCESSFUL:
                raise ConflictError(
                    f"Transfer is {transfer.status.value}; only a successful transfer "
                    "can be reversed"
                )
            event = self._reverse(transfer, reason)
            return event if webhook else None

    def _reverse(
        self, transfer: Transfer, reason: str, *, extra_faults: frozenset[str] = frozenset()
    ) -> WebhookEvent:
        transfer.status = Status.FAILED
        transfer.failure_reason = reason
        transfer.reversed_at = self.clock()
        self._post(
            Kind.REVERSAL,
            Direction.CREDIT,
            transfer.amount,
            transfer.reference,
            f"Reversal: {transfer.reference} / {transfer.merchant_reference} / {reason}",
        )
        faults = (transfer.faults & _WEBHOOK_FAULTS) | extra_faults
        delay = self._faults.webhook_delay_seconds if "webhook_delay" in faults else 0.0
        return WebhookEvent(
            EventType.TRANSFER_FAILED,
            {
                "reference": transfer.reference,
                "merchant_reference": transfer.merchant_reference,
                "status": Status.FAILED.value,
                "failure_reason": reason,
            },
            transfer.reference,
            transfer.merchant_reference,
            faults,
            delay,
        )

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
            # The provider charged a different fee than it quoted (the wallet paid it at
            # initiation, see _debit_payout); from now on the lookup answers it too.
            transfer.fee_charged = transfer.fee_quoted + FEE_DRIFT_DELTA
        if status is Status.FAILED:
            # The amount comes back, the fee does not (spec).
            self._post(
                Kind.REFUND,
                Direction.CREDIT,
                transfer.amount,
                transfer.reference,
                f"Refund: {transfer.reference} / {transfer.merchant_reference}",
            )
            faults -= {"tamper_amount", "tamper_fee"}  # a failed webhook carries neither
        transfer.status = status
        transfer.failure_reason = reason
        transfer.completed_at = self.clock()
        if status is Status.SUCCESSFUL:
            self._plan_reversal(transfer, faults)
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

    def _plan_reversal(self, transfer: Transfer, faults: set[str]) -> None:
        """reverse_after_success: maybe schedule this success's reversal (and decide whether
        its webhook will be dropped); `faults` gains what was decided."""
        reversed_later, dropped = decide_reversal(
            self._faults, self._fault_seed(), transfer.merchant_reference
        )
        if not reversed_later:
            return
        faults.add("reverse_after_success")
        if dropped:
            faults.add("reverse_webhook_dropped")
        due = self.clock() + self._faults.reverse_after_seconds
        heapq.heappush(self._reversals, (due, next(self._sequence), transfer.reference))

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
            if candidate not in self._issued:
                self._issued.add(candidate)
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
            credit = self._collections.pay(
                collection, amount, faults, self._faults.collection_late_seconds
            )
            self._post(
                Kind.COLLECTION,
                Direction.CREDIT,
                credit,  # amount paid - fee; 0 (nothing moves) when underpaid
                collection.reference,
                f"Collection: {collection.reference} / {collection.merchant_reference}",
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
