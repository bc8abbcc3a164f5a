"""The report model: plain dataclasses and the pure arithmetic that turns SQL sums into it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ledger.types import FindingKind, TransferStatus
from reconcile.checks import DEFAULT_STALE_AFTER
from reconcile.reports.period import Period

# A collection has the provider's three statuses; a transfer also `reversed` (docs/rules.md:
# Reversals).
COLLECTION_STATUSES: tuple[str, ...] = ("successful", "failed", "pending")
STATUSES: tuple[str, ...] = (*COLLECTION_STATUSES, "reversed")
# Where a bounded answer sends a reader for the whole list: the findings queue and the stale
# transfers, both paged by cursor (the report files, `payrecon report`, hold every entry).
FINDINGS_QUEUE = "/api/findings?state=open"
STALE_QUEUE = "/api/transfers?status=pending&finding=stale_pending"
KINDS: tuple[str, ...] = tuple(k.value for k in FindingKind)


def iso(value: dt.datetime | None) -> str | None:
    """An aware datetime as ISO-8601 UTC with `Z`, as the rest of the API shows times."""
    if value is None:
        return None
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class StatusTotals:
    """Transfers of one status: how many, money moved (kobo), fees (kobo), not yet confirmed."""

    count: int = 0
    amount: int = 0
    fee: int = 0
    unconfirmed: int = 0

    def as_dict(self) -> dict[str, int]:
        """The JSON shape `{count, amount, fee, unconfirmed}`."""
        return {
            "count": self.count,
            "amount": self.amount,
            "fee": self.fee,
            "unconfirmed": self.unconfirmed,
        }


@dataclass(frozen=True)
class DayLine:
    """One Lagos day: transfers created, amount of successful ones, fees charged, failures."""

    date: dt.date
    count: int = 0
    amount: int = 0
    fee: int = 0
    failed: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape `{date, count, amount, fee, failed}`."""
        return {
            "date": self.date.isoformat(),
            "count": self.count,
            "amount": self.amount,
            "fee": self.fee,
            "failed": self.failed,
        }


@dataclass(frozen=True)
class CollectionTotals:
    """Collections created in the period by status (docs/rules.md: Collections): `amount` is
    what was paid when the provider says so, else the amount asked for; `fee` the fee charged
    on successful ones, the quote on pending ones, none on failed ones."""

    by_status: Mapping[str, StatusTotals] = field(default_factory=dict)

    def status(self, name: str) -> StatusTotals:
        """Totals for one status (zeros when none)."""
        return self.by_status.get(name, StatusTotals())

    @property
    def total(self) -> int:
        """Collections created in the period."""
        return sum(t.count for t in self.by_status.values())

    @property
    def received(self) -> int:
        """Money customers paid into successful collections."""
        return self.status(TransferStatus.SUCCESSFUL).amount

    @property
    def fees(self) -> int:
        """Fees the provider kept from successful collections."""
        return self.status(TransferStatus.SUCCESSFUL).fee

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape `{total, by_status {status: {count, amount, fee}}, received, fees}`."""
        return {
            "total": self.total,
            "by_status": {
                name: {
                    "count": self.status(name).count,
                    "amount": self.status(name).amount,
                    "fee": self.status(name).fee,
                }
                for name in COLLECTION_STATUSES
            },
            "received": self.received,
            "fees": self.fees,
        }


@dataclass(frozen=True)
class OpenFinding:
    """An unresolved finding with its transfer (or collection) and the advice for it."""

    id: int
    kind: str
    detail: str
    reference: str
    provider_reference: str | None
    status: str
    amount: int | None
    opened_at: dt.datetime
    acknowledged_at: dt.datetime | None
    ack_note: str | None
    what_to_do: str  # for ops: the CLI, alerts and the JSON (with commands)
    subject: str = "transfer"  # or "collection"
    advice: str = ""  # for finance: pages and the HTML report (plain language, naira)

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of one entry of `open_findings`."""
        return {
            "id": self.id,
            "subject": self.subject,
            "kind": self.kind,
            "detail": self.detail,
            "reference": self.reference,
            "provider_reference": self.provider_reference,
            "status": self.status,
            "amount": self.amount,
            "opened_at": iso(self.opened_at),
            "acknowledged": self.acknowledged_at is not None,
            "acknowledged_at": iso(self.acknowledged_at),
            "ack_note": self.ack_note,
            "what_to_do": self.what_to_do,
        }


@dataclass(frozen=True)
class StalePending:
    """A transfer still pending after the stale limit."""

    reference: str
    provider_reference: str | None
    amount: int | None
    fee: int | None
    created_at: dt.datetime
    finding_id: int | None
    acknowledged: bool
    what_to_do: str  # for ops (with commands)
    advice: str = ""  # for finance (plain language)

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of one entry of `stale_pending`."""
        return {
            "reference": self.reference,
            "provider_reference": self.provider_reference,
            "amount": self.amount,
            "fee": self.fee,
            "created_at": iso(self.created_at),
            "finding_id": self.finding_id,
            "acknowledged": self.acknowledged,
            "what_to_do": self.what_to_do,
        }


@dataclass(frozen=True)
class Report:
    """Everything a finance report shows; every money figure is int kobo."""

    period: Period
    by_status: Mapping[str, StatusTotals]
    figures_from: Mapping[str, int]
    findings_open: Mapping[str, int]
    findings_acknowledged: Mapping[str, int]
    open_findings: list[OpenFinding] = field(default_factory=list)
    stale_pending: list[StalePending] = field(default_factory=list)
    days: list[DayLine] = field(default_factory=list)
    stale_after: int = DEFAULT_STALE_AFTER
    collections: CollectionTotals = field(default_factory=CollectionTotals)
    # How many transfers are stale pending in all (the list may hold only the first ones).
    stale_pending_count: int | None = None
    # The bound the lists were cut to (None: they are whole, as in report files).
    list_limit: int | None = None

    def status(self, name: str) -> StatusTotals:
        """Totals for one status (zeros when none)."""
        return self.by_status.get(name, StatusTotals())

    @property
    def total_count(self) -> int:
        """Transfers created in the period."""
        return sum(t.count for t in self.by_status.values())

    @property
    def unconfirmed(self) -> int:
        """Transfers whose figures the provider's API has not confirmed yet."""
        return sum(t.unconfirmed for t in self.by_status.values())

    @property
    def fees_on_successful(self) -> int:
        """Fees charged on successful transfers."""
        return self.status(TransferStatus.SUCCESSFUL).fee

    @property
    def fees_on_failed(self) -> int:
        """Fees charged even though the transfer failed (the provider may keep them)."""
        return self.status(TransferStatus.FAILED).fee

    @property
    def fees_on_reversed(self) -> int:
        """Fees of transfers reversed after success: the amount came back, the fee did not
        (docs/rules.md: Reversals)."""
        return self.status(TransferStatus.REVERSED).fee

    @property
    def fees_total(self) -> int:
        """Fees charged: successful, failed and reversed transfers, never quotes on pending
        ones."""
        return self.fees_on_successful + self.fees_on_failed + self.fees_on_reversed

    @property
    def wallet_debit(self) -> int:
        """What left the wallet: amount and fee of successful transfers plus the fees of failed
        and reversed ones (a reversed transfer's amount came back)."""
        return self.status(TransferStatus.SUCCESSFUL).amount + self.fees_total

    @property
    def net_flow(self) -> int:
        """Money in minus money out: collections received − collection fees − wallet debit."""
        return self.collections.received - self.collections.fees - self.wallet_debit

    @property
    def open_findings_total(self) -> int:
        """Unresolved findings on transfers and collections of the period (all of them, also
        when `open_findings` holds only the first ones)."""
        return sum(self.findings_open.values())

    @property
    def stale_pending_total(self) -> int:
        """Transfers of the period stale pending now (all of them)."""
        if self.stale_pending_count is None:
            return len(self.stale_pending)
        return self.stale_pending_count

    def as_dict(self) -> dict[str, Any]:
        """The JSON report (docs/rules.md "Reports"); kobo integers throughout."""
        pending = self.status(TransferStatus.PENDING)
        return {
            "period": self.period.as_dict(),
            "currency": "NGN",
            "unit": "kobo",
            "transfers": {
                "total": self.total_count,
                "unconfirmed": self.unconfirmed,
                "by_status": {name: self.status(name).as_dict() for name in STATUSES},
            },
            "fees": {
                "total": self.fees_total,
                "on_successful": self.fees_on_successful,
                "on_failed": self.fees_on_failed,
                "on_reversed": self.fees_on_reversed,
                "quoted_on_pending": pending.fee,
            },
            "wallet_debit": self.wallet_debit,
            "collections": self.collections.as_dict(),
            "net_flow": self.net_flow,
            "figures_from": dict(self.figures_from),
            "findings": {kind: self.findings_open.get(kind, 0) for kind in _kinds(self)},
            "findings_acknowledged": {
                kind: self.findings_acknowledged.get(kind, 0) for kind in _kinds(self)
            },
            "open_findings": [f.as_dict() for f in self.open_findings],
            # Bounded answers (docs/rules.md Robustness rules): the counts are whole; `truncated`
            # says the list holds only the first ones, and `more` where to read them all.
            "open_findings_count": self.open_findings_total,
            "open_findings_truncated": len(self.open_findings) < self.open_findings_total,
            "open_findings_more": (
                FINDINGS_QUEUE if len(self.open_findings) < self.open_findings_total else None
            ),
            "stale_after_seconds": self.stale_after,
            "stale_pending": [s.as_dict() for s in self.stale_pending],
            "stale_pending_count": self.stale_pending_total,
            "stale_pending_truncated": len(self.stale_pending) < self.stale_pending_total,
            "stale_pending_more": (
                STALE_QUEUE if len(self.stale_pending) < self.stale_pending_total else None
            ),
            "days": [d.as_dict() for d in self.days],
        }


def _kinds(report: Report) -> list[str]:
    # The stable kinds always appear (zeros included) so the shape never depends on the data.
    extra = sorted(set(report.findings_open) - set(KINDS))
    return [*KINDS, *extra]


def fill_days(lines: Iterable[DayLine]) -> list[DayLine]:
    """Days sorted, with zero lines for quiet days between the first and the last one."""
    by_date = {line.date: line for line in lines}
    if not by_date:
        return []
    first, last = min(by_date), max(by_date)
    span = (last - first).days + 1
    days = (first + dt.timedelta(days=offset) for offset in range(span))
    return [by_date.get(day, DayLine(day)) for day in days]
