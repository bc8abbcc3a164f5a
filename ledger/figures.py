"""The one figure rule: which of a transfer's or collection's money figures count, and how much
a finding puts at stake — as SQL expressions and as plain Python, so every surface agrees.

docs/rules.md "Report figures": money that moved is counted at the provider's confirmed figures
when there are any, else the webhook's, else the expected amount and quoted fee. The console
overview, the reports and the findings queue all count with these functions (issue 25, point
4: the overview and the report once disagreed about webhook-only transfers). A collection's
money is what the provider says was paid, else what was asked for; its fee is what the
provider charged, none on a failed collection that was charged nothing, else the quote.
"""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy import case, func
from sqlalchemy.sql.elements import ColumnElement

from ledger.types import FindingKind, TransferStatus

# Kinds about a difference between figures: what is at stake is the difference, not the sum.
_AMOUNT_DIFFERENCE = frozenset({FindingKind.AMOUNT_MISMATCH.value})
_FEE_DIFFERENCE = frozenset({FindingKind.FEE_MISMATCH.value})
_PAID_DIFFERENCE = frozenset({FindingKind.UNDERPAID.value, FindingKind.OVERPAID.value})


# SQL ------------------------------------------------------------------------------------------
# `columns` is a table's column collection (`Transfer.__table__.c`, or an alias's), so the same
# expression serves a plain select, a join and an aliased subquery.


def transfer_amount_sql(columns: Any) -> ColumnElement[Any]:
    """A transfer's counted amount: the provider's, else the webhook's, else the expected."""
    return func.coalesce(columns.provider_amount, columns.webhook_amount, columns.amount, 0)


def transfer_fee_sql(columns: Any) -> ColumnElement[Any]:
    """A transfer's counted fee: the provider's, else the webhook's, else the quote."""
    return func.coalesce(columns.provider_fee, columns.webhook_fee, columns.fee, 0)


def collection_amount_sql(columns: Any) -> ColumnElement[Any]:
    """A collection's counted money: what the provider says was paid, else the amount asked."""
    return func.coalesce(columns.amount_paid, columns.amount, 0)


def collection_fee_sql(columns: Any) -> ColumnElement[Any]:
    """A collection's counted fee: charged when known, none on a failed one, else the quote."""
    failed = columns.status == TransferStatus.FAILED.value
    return func.coalesce(columns.provider_fee, case((failed, 0), else_=columns.fee), 0)


# Python ---------------------------------------------------------------------------------------


class TransferFigures(Protocol):
    """A transfer's money figures (a `Transfer` row has them)."""

    @property
    def amount(self) -> int | None: ...
    @property
    def fee(self) -> int | None: ...
    @property
    def provider_amount(self) -> int | None: ...
    @property
    def provider_fee(self) -> int | None: ...
    @property
    def webhook_amount(self) -> int | None: ...
    @property
    def webhook_fee(self) -> int | None: ...


class CollectionFigures(Protocol):
    """A collection's money figures (a `Collection` row has them)."""

    @property
    def amount(self) -> int: ...
    @property
    def amount_paid(self) -> int | None: ...
    @property
    def fee(self) -> int | None: ...
    @property
    def provider_fee(self) -> int | None: ...
    @property
    def status(self) -> str: ...


def _first(*values: int | None) -> int:
    return next((value for value in values if value is not None), 0)


def transfer_amount(t: TransferFigures) -> int:
    """`transfer_amount_sql` in Python."""
    return _first(t.provider_amount, t.webhook_amount, t.amount)


def transfer_fee(t: TransferFigures) -> int:
    """`transfer_fee_sql` in Python."""
    return _first(t.provider_fee, t.webhook_fee, t.fee)


def collection_amount(c: CollectionFigures) -> int:
    """`collection_amount_sql` in Python."""
    return _first(c.amount_paid, c.amount)


def collection_fee(c: CollectionFigures) -> int:
    """`collection_fee_sql` in Python."""
    quoted = 0 if c.status == TransferStatus.FAILED.value else c.fee
    return _first(c.provider_fee, quoted)


def counted_amount(subject: TransferFigures | CollectionFigures) -> int:
    """The counted amount of a transfer or a collection (told apart by `amount_paid`)."""
    if hasattr(subject, "amount_paid"):
        return collection_amount(subject)  # type: ignore[arg-type]
    return transfer_amount(subject)


def counted_fee(subject: TransferFigures | CollectionFigures) -> int:
    """The counted fee of a transfer or a collection (told apart by `amount_paid`): none on a
    failed collection that was charged nothing."""
    if hasattr(subject, "amount_paid"):
        return collection_fee(subject)  # type: ignore[arg-type]
    return transfer_fee(subject)


def _spread(*values: int | None) -> int | None:
    known = [value for value in values if value is not None]
    if len(known) < 2:
        return None
    return max(known) - min(known)


def amount_at_stake(kind: str, subject: TransferFigures | CollectionFigures) -> int:
    """How much money (kobo) a finding of `kind` on `subject` is about.

    For a difference between figures (amount or fee mismatch, under- or overpaid) it is the
    difference — the widest one when the expected, webhook and provider figures all differ;
    for everything else (a status in doubt, an orphan, a transfer the provider does not know,
    a stuck or reversed one) the money itself is in question: the counted amount.
    """
    is_collection = hasattr(subject, "amount_paid")
    difference: int | None = None
    if kind in _PAID_DIFFERENCE and is_collection:
        paid = getattr(subject, "amount_paid", None)
        difference = None if paid is None else abs(paid - subject.amount)
    elif kind in _FEE_DIFFERENCE:
        charged: tuple[int | None, ...]
        if is_collection:
            charged = (subject.provider_fee,)
            difference = _spread(subject.fee, subject.provider_fee)
        else:
            t: TransferFigures = subject  # type: ignore[assignment]
            charged = (t.provider_fee, t.webhook_fee)
            difference = _spread(t.fee, t.webhook_fee, t.provider_fee)
        # A fee over the contract schedule (figures agreeing, or one known): the fee charged.
        difference = difference or _first(*charged, subject.fee)
    elif kind in _AMOUNT_DIFFERENCE and not is_collection:
        t = subject  # type: ignore[assignment]
        difference = _spread(t.amount, t.webhook_amount, t.provider_amount)
    if difference is not None:
        return difference
    return counted_amount(subject)
