"""The money movements the ledger expects a transfer or collection to leave on the wallet
statement (docs/rules.md "Statements and period tie-out", "Matching"; "Reversals").

A payout is one debit of amount + fee, or two (the amount, then the fee); a failed transfer
also gets its amount back (the fee is kept); a reversed one gets its amount back too; a
successful collection is credited the amount paid less the fee. Pending subjects are expected
to leave nothing yet — except a pending payout whose debit is on the statement already (the
provider debits when it takes a payout): that debit, and its fee's line, are its movements.
Shared by the matcher (which slot a line fills), `missing_from_statement` and the tie-out
(what the ledger says moved).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from dataclasses import dataclass

from statements.facts import LineRole, Subject, SubjectKind, SubjectRef, SubjectStatus
from statements.lines import Direction

PAYOUT_ROLES = frozenset({LineRole.PAYOUT, LineRole.PAYOUT_AMOUNT, LineRole.PAYOUT_FEE})
CREDIT_ROLES = frozenset({LineRole.REFUND, LineRole.REVERSAL, LineRole.COLLECTION_CREDIT})


@dataclass(frozen=True, slots=True)
class Movement:
    """One movement the ledger expects on the wallet statement, on the ledger's date."""

    subject: SubjectRef
    role: LineRole
    direction: Direction
    amount: int
    date: dt.date

    @property
    def signed_amount(self) -> int:
        """The amount with its sign: credits positive, debits negative."""
        return self.amount if self.direction is Direction.CREDIT else -self.amount


def collection_net(subject: Subject) -> int:
    """What a collection credits the wallet: the amount paid (else asked) less the fee."""
    paid = subject.amount if subject.amount_paid is None else subject.amount_paid
    return paid - subject.fee


def ledger_figure(subject: Subject, role: LineRole) -> int:
    """The amount in kobo the ledger expects of the line playing `role` for `subject`."""
    if role is LineRole.PAYOUT:
        return subject.amount + subject.fee
    if role is LineRole.PAYOUT_FEE:
        return subject.fee
    if role is LineRole.COLLECTION_CREDIT:
        return collection_net(subject)
    return subject.amount  # the amount's debit, a refund, a reversal


def role_direction(role: LineRole) -> Direction:
    """Payout lines are debits; refunds, reversals and collection credits are credits."""
    return Direction.DEBIT if role in PAYOUT_ROLES else Direction.CREDIT


def final_at_provider(subject: Subject) -> bool:
    """Whether the subject's money has certainly moved: a successful, reversed or failed
    transfer that was charged a fee, or a successful collection."""
    if subject.kind is SubjectKind.COLLECTION:
        return subject.status is SubjectStatus.SUCCESSFUL
    if subject.status is SubjectStatus.FAILED:
        return subject.fee > 0
    return subject.status in (SubjectStatus.SUCCESSFUL, SubjectStatus.REVERSED)


def expected_movements(subject: Subject, matched: Collection[LineRole] = ()) -> list[Movement]:
    """The movements the ledger expects for `subject`, given the roles its lines already
    matched play (`matched`): a payout is expected in two lines once one of the two is
    there, else in one. Movements of 0 kobo are never expected (no statement shows them);
    a failed transfer charged no fee is expected to show nothing unless a line of it was
    matched (then its debit and refund both, which net to 0)."""
    roles: list[LineRole] = []
    if subject.kind is SubjectKind.COLLECTION:
        if subject.status is SubjectStatus.SUCCESSFUL:
            roles.append(LineRole.COLLECTION_CREDIT)
    elif subject.status is SubjectStatus.PENDING:
        # The provider debits a payout when it takes it, before its outcome is known: a
        # pending payout's debit on the statement is its movement, not a mismatch; none is
        # expected (nor missing) until one shows (docs/statements.md "Pending payouts").
        if LineRole.PAYOUT in matched:
            roles.append(LineRole.PAYOUT)
        elif LineRole.PAYOUT_AMOUNT in matched or LineRole.PAYOUT_FEE in matched:
            roles += [LineRole.PAYOUT_AMOUNT, LineRole.PAYOUT_FEE]
    elif subject.status is not SubjectStatus.FAILED or subject.fee > 0 or matched:
        split = LineRole.PAYOUT not in matched and (
            LineRole.PAYOUT_AMOUNT in matched or LineRole.PAYOUT_FEE in matched
        )
        roles += [LineRole.PAYOUT_AMOUNT, LineRole.PAYOUT_FEE] if split else [LineRole.PAYOUT]
        if subject.status is SubjectStatus.FAILED:
            roles.append(LineRole.REFUND)
        elif subject.status is SubjectStatus.REVERSED:
            roles.append(LineRole.REVERSAL)
    return [
        Movement(
            subject=subject.ref,
            role=role,
            direction=role_direction(role),
            amount=ledger_figure(subject, role),
            date=(subject.reversed_on or subject.date)
            if role is LineRole.REVERSAL
            else subject.date,
        )
        for role in roles
        if ledger_figure(subject, role) > 0
    ]
