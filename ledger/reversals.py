"""A confirmed success that came back: the one way a transfer becomes `reversed`.

docs/rules.md (Reversals): a reversal is found by a re-verification lookup answering `failed`,
by a `transfer.failed` webhook that a lookup confirms, or by a credit on the wallet statement.
Whoever finds it calls `reverse_transfer`, which makes every change of a reversal in the
caller's transaction: the transfer's status and reversal columns, `transfer.reversed` (after the
subject's `transfer.confirmed` in its sequence), and the `reversed_after_success` finding with
its `finding.opened`. Its alert is the finding's: claimed once in `alert` by the reconciler
(reconcile/alerts.py), so neither a restart nor a second reconciler sends it twice.
"""

from __future__ import annotations

import datetime as dt

from sqlmodel import Session

from ledger.errors import NotReversibleError
from ledger.events import transfers as relay_transfers
from ledger.events.findings import raise_finding
from ledger.events.outbox import Subscriber
from ledger.events.payloads import iso
from ledger.events.types import Subject
from ledger.models import Transfer
from ledger.types import FindingKind, ReversalSource, TransferStatus, storable_text

# A reason comes from the provider or a bank statement's narration: kept whole up to this.
MAX_REASON = 500


def reversal_detail(transfer: Transfer) -> str:
    """The `reversed_after_success` finding's detail: both times, the reason, the source."""
    return (
        f"confirmed successful at {iso(transfer.confirmed_at) or 'an unknown time'}, "
        f"reversed at {iso(transfer.reversed_at)} ({transfer.reversal_source}): "
        f"{transfer.reversal_reason}"
    )


def reverse_transfer(
    session: Session,
    transfer: Transfer,
    *,
    reason: str,
    source: ReversalSource,
    now: dt.datetime,
    endpoints: list[Subscriber] | None = None,
) -> bool:
    """Record that `transfer`, confirmed successful, came back; False when it already had.

    Does not commit. The row is locked first (PostgreSQL), so two reconcilers, or a reconciler
    and a statement import, record one reversal, one finding and one event between them.
    NotReversibleError when the provider never confirmed the transfer successful. The
    reconciler calls it with the status already set by its verdict (`reversed`, not yet
    recorded); any other caller passes a `successful` transfer.
    """
    session.flush()
    session.refresh(transfer, with_for_update=True)
    if transfer.reversed_at is not None:
        return False
    reversible = {TransferStatus.SUCCESSFUL.value, TransferStatus.REVERSED.value}
    if not transfer.confirmed or transfer.status not in reversible:
        raise NotReversibleError(
            f"transfer {transfer.reference} is {transfer.status}"
            f"{'' if transfer.confirmed else ', not confirmed'}: only a confirmed success can "
            "be reversed"
        )
    assert transfer.id is not None
    text = storable_text(reason.strip())[:MAX_REASON] or "no reason given"
    transfer.status = TransferStatus.REVERSED.value
    transfer.reversed_at = now
    transfer.reversal_reason = text
    transfer.reversal_source = source.value
    transfer.failure_reason = text
    # Final: nothing more to look up unless a later webhook makes it due again.
    transfer.next_check_at = None
    transfer.updated_at = now
    session.flush()
    relay_transfers.reversed_(session, transfer, now=now, endpoints=endpoints)
    raise_finding(
        session,
        subject=Subject.TRANSFER,
        subject_id=transfer.id,
        kind=FindingKind.REVERSED_AFTER_SUCCESS,
        detail=reversal_detail(transfer),
        now=now,
        reference=transfer.reference,
        endpoints=endpoints,
    )
    return True
