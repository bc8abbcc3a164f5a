"""What the matcher and the tie-out are told: stored statement lines with their state and
match, and the ledger's facts about the transfers and collections they may belong to. Pure
data; the shells build these from the database (docs/rules.md "Statements and period tie-out")."""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass, field

from statements.lines import Direction


class AccountKind(enum.StrEnum):
    """The provider wallet, or the merchant's bank account."""

    WALLET = "wallet"
    BANK = "bank"


class LineState(enum.StrEnum):
    """Where a stored line stands (the contract's `state`)."""

    MATCHED = "matched"
    SUGGESTED = "suggested"
    UNMATCHED = "unmatched"
    IGNORED = "ignored"


class LineRole(enum.StrEnum):
    """Which of its subject's money movements a matched line is."""

    PAYOUT = "payout"  # amount and fee in one debit
    PAYOUT_AMOUNT = "payout_amount"  # the amount's debit, when the fee is a line of its own
    PAYOUT_FEE = "payout_fee"
    REFUND = "refund"  # a failed transfer's amount coming back
    REVERSAL = "reversal"  # a successful transfer's amount coming back
    COLLECTION_CREDIT = "collection_credit"  # amount paid less the fee


class IgnoreType(enum.StrEnum):
    """Why finance says a line belongs to no transfer or collection (`ignore --as`)."""

    FUNDING = "funding"
    CHARGE = "charge"
    SETTLEMENT = "settlement"
    OTHER = "other"


class SubjectKind(enum.StrEnum):
    """The ledger's two kinds of money movement a wallet line can belong to."""

    TRANSFER = "transfer"
    COLLECTION = "collection"


class SubjectStatus(enum.StrEnum):
    """The ledger's status of a transfer or collection, as the matcher needs it."""

    PENDING = "pending"
    SUCCESSFUL = "successful"
    FAILED = "failed"
    REVERSED = "reversed"


@dataclass(frozen=True, slots=True)
class SubjectRef:
    """A transfer or collection, named by the merchant's reference (the ledger's key)."""

    kind: SubjectKind
    reference: str


@dataclass(frozen=True, slots=True)
class Subject:
    """What the ledger knows of one transfer or collection.

    `fee` is the fee charged (the provider's confirmed fee, else the webhook's, else the
    quoted one; 0 when none). `amount_paid` is a collection's amount actually paid (None:
    the amount asked for). `date` is the day its money moved as the ledger knows it (created
    or completed); `reversed_on` the day a reversed transfer came back (None: `date`).
    """

    kind: SubjectKind
    reference: str
    provider_reference: str | None
    amount: int
    fee: int
    status: SubjectStatus
    date: dt.date
    amount_paid: int | None = None
    reversed_on: dt.date | None = None
    # The subject's name, made once: the matcher looks subjects up by it several times a line.
    ref: SubjectRef = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ref", SubjectRef(self.kind, self.reference))


@dataclass(frozen=True, slots=True)
class LineMatch:
    """What a line is matched (or suggested) to: a subject with the line's role in it, or
    another line (a funding or settlement pair across a wallet and a bank account)."""

    subject: SubjectRef | None = None
    role: LineRole | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class StatementLine:
    """One stored statement line as the matcher and the tie-out see it.

    `amount` is positive kobo, `direction` its sign. `balance` is the running balance after
    the line (None when the statement has none). `match` is set for matched and suggested
    lines, `ignored_as` for ignored ones.
    """

    id: int
    account: str
    account_kind: AccountKind
    date: dt.date
    amount: int
    direction: Direction
    reference: str
    narration: str
    state: LineState = LineState.UNMATCHED
    match: LineMatch | None = None
    ignored_as: IgnoreType | None = None
    balance: int | None = None

    @property
    def signed_amount(self) -> int:
        """The amount with its sign: credits positive, debits negative."""
        return self.amount if self.direction is Direction.CREDIT else -self.amount
