"""The statement findings (docs/rules.md "Statements and period tie-out", Findings), raised and
resolved through `ledger.events.findings` (the only writer of findings: each change writes its
`finding.opened`/`finding.resolved` event, and alerts go through the grouped dispatch):

* on a statement line (subject `statement_line:ID`): `unmatched_statement_line` (unmatched,
  not suggested, not ignored, dated more than the date window ago), `statement_balance_gap`
  (its balance does not follow from the previous line's), `closed_period_changed` (an import
  added it, or it was matched, unmatched or ignored, inside a locked period);
* on a transfer or collection: `missing_from_statement` (final at the provider, a movement no
  line shows though an imported wallet statement covers its date plus the window),
  `statement_mismatch` (its lines show other figures than the ledger, both in the detail),
  `closed_period_changed` (its status changed after its period was locked), and
  `reversed_after_success` (a statement credit for a successful transfer:
  `ledger.reversals.reverse_transfer`, source `statement`).

Each is evaluated where its cause can change, in the transaction of that change: after an
import (its new lines, the subjects they name, the subjects of its days), after a line is
worked by hand, and in every reconcile pass (the lines it decided again, the subjects whose
status changed since the last passes, and a bounded sweep of lines that aged past the window).
Every query goes through an index; nothing here reads the whole statement.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Date, and_, bindparam, func, select, text
from sqlmodel import Session, col

from ledger.errors import NotReversibleError
from ledger.events.findings import raise_finding, raise_new_findings, resolve_finding
from ledger.events.outbox import Subscriber, subscribers
from ledger.events.types import RelayEventType, Subject
from ledger.findings import open_kinds_by_subject
from ledger.models import (
    Collection,
    Finding,
    PeriodLock,
    RelayEvent,
    StatementImport,
    StatementLine,
    Transfer,
)
from ledger.reversals import reverse_transfer
from ledger.subjects import find_by_reference
from ledger.types import FindingKind, ReversalSource
from reconcile.reports.period import lagos_day
from reconcile.statements.facts import (
    Subjects,
    line_fact,
    load_accounts,
    subject_line_rows,
    subjects_by_ids,
)
from reconcile.statements.hand import LineChange
from reconcile.statements.importer import ImportSummary
from reconcile.statements.periodsums import period_sums
from statements.expected import final_at_provider
from statements.facts import AccountKind, LineState, SubjectKind, SubjectRef
from statements.facts import StatementLine as LineFact
from statements.tieout import MovementMismatch, tie_subject

# Ids per statement: SQLite takes at most 32,766 parameters.
CHUNK = 5_000
# Lines a pass newly finds unmatched past the window (or matched again): a pass stays short
# whatever the backlog; the next pass carries on.
MAX_SWEEP_LINES = 2_000
# A balance break is looked for this far before an import's first day too (the line that
# precedes the new ones may be an earlier export's).
CHAIN_OVERLAP = dt.timedelta(days=7)
# The relay events that say a subject's status changed (its money is final).
STATUS_EVENTS = (
    RelayEventType.TRANSFER_CONFIRMED.value,
    RelayEventType.TRANSFER_REVERSED.value,
    RelayEventType.COLLECTION_CONFIRMED.value,
)
_LINE = Subject.STATEMENT_LINE
_BY_KIND = {SubjectKind.TRANSFER: Subject.TRANSFER, SubjectKind.COLLECTION: Subject.COLLECTION}
_F = Finding.__table__.c  # type: ignore[attr-defined]


@dataclass
class Counts:
    """What an evaluation raised and resolved, by kind."""

    raised: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    resolved: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    reversals: int = 0


@dataclass
class _Writer:
    """Raises and resolves findings in one session, with the relay's subscribers read once."""

    session: Session
    now: dt.datetime
    counts: Counts = field(default_factory=Counts)
    _endpoints: list[Subscriber] | None = None

    @property
    def endpoints(self) -> list[Subscriber]:
        if self._endpoints is None:
            self._endpoints = subscribers(self.session)
        return self._endpoints

    def raise_(
        self, kind: FindingKind, subject: Subject, subject_id: int, reference: str, detail: str
    ) -> None:
        opened = raise_finding(
            self.session,
            kind=kind,
            detail=detail,
            now=self.now,
            subject=subject,
            subject_id=subject_id,
            reference=reference,
            endpoints=self.endpoints,
        )
        if opened is not None:
            self.counts.raised[kind.value] += 1

    def raise_many(self, kind: FindingKind, subject: Subject, details: dict[int, str]) -> None:
        """`raise_` on each subject id of `details` (its detail; the id is its reference):
        those with no finding of `kind` yet in bulk, the others one by one."""
        if not details:
            return
        references = {subject_id: str(subject_id) for subject_id in details}
        opened = raise_new_findings(
            self.session,
            kind=kind,
            subject=subject,
            details=details,
            references=references,
            now=self.now,
            endpoints=self.endpoints,
        )
        self.counts.raised[kind.value] += len(opened)
        for subject_id, detail in details.items():
            if subject_id not in opened:
                self.raise_(kind, subject, subject_id, references[subject_id], detail)

    def resolve(self, kind: FindingKind, subject: Subject, subject_id: int, reference: str) -> None:
        closed = resolve_finding(
            self.session,
            kind=kind,
            now=self.now,
            subject=subject,
            subject_id=subject_id,
            reference=reference,
            endpoints=self.endpoints,
        )
        if closed is not None:
            self.counts.resolved[kind.value] += 1


def _chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), CHUNK):
        yield list(ids[start : start + CHUNK])


def _cutoff(now: dt.datetime, window: dt.timedelta) -> dt.date:
    """Lines dated before this day are more than the date window old."""
    return lagos_day(now) - window


# Reversals ------------------------------------------------------------------------------------


def apply_reversals(session: Session, line_ids: Iterable[int], writer: _Writer) -> None:
    """Apply each statement credit the matcher read as a reversal (`reversal_pending`) to its
    transfer: `reverse_transfer`, source `statement` (it opens `reversed_after_success`). A
    transfer the provider never confirmed successful keeps the flag (the credit waits)."""
    for chunk in _chunks(sorted(set(line_ids))):
        lines = session.execute(
            select(StatementLine).where(
                col(StatementLine.id).in_(chunk), col(StatementLine.reversal_pending).is_(True)
            )
        ).scalars()
        for line in list(lines):
            transfer = None if line.transfer_id is None else session.get(Transfer, line.transfer_id)
            if transfer is None:
                line.reversal_pending = False
                continue
            reason = f"credited back on the statement, line {line.id}: " + (
                line.narration or line.reference or "no narration"
            )
            try:
                if reverse_transfer(
                    session,
                    transfer,
                    reason=reason,
                    source=ReversalSource.STATEMENT,
                    now=writer.now,
                    endpoints=writer.endpoints,
                ):
                    writer.counts.reversals += 1
                    writer.counts.raised[FindingKind.REVERSED_AFTER_SUCCESS.value] += 1
            except NotReversibleError:
                continue
            line.reversal_pending = False
            session.add(line)
    session.flush()


# Lines ----------------------------------------------------------------------------------------


def _line_detail(line: Any) -> str:
    what = line.reference or line.narration or "no reference"
    return (
        f"{line.direction} of {line.amount} kobo on {line.date.isoformat()} ({what}) matches "
        "no transfer or collection and is not explained"
    )


def evaluate_lines(
    session: Session, line_ids: Iterable[int], writer: _Writer, *, window: dt.timedelta
) -> None:
    """Raise or resolve `unmatched_statement_line` on each of the lines."""
    cutoff = _cutoff(writer.now, window)
    for chunk in _chunks(sorted(set(line_ids))):
        open_kinds = open_kinds_by_subject(session, subject=_LINE, ids=chunk)
        lines = session.execute(
            select(StatementLine).where(col(StatementLine.id).in_(chunk))
        ).scalars()
        to_raise: dict[int, str] = {}
        for line in list(lines):
            assert line.id is not None
            has = FindingKind.UNMATCHED_STATEMENT_LINE.value in open_kinds.get(line.id, set())
            stale = line.state == LineState.UNMATCHED and line.date < cutoff
            if stale and not has:
                to_raise[line.id] = _line_detail(line)
            elif has and not stale:
                writer.resolve(FindingKind.UNMATCHED_STATEMENT_LINE, _LINE, line.id, str(line.id))
        writer.raise_many(FindingKind.UNMATCHED_STATEMENT_LINE, _LINE, to_raise)


def sweep_lines(
    session: Session,
    writer: _Writer,
    *,
    window: dt.timedelta,
    account_id: int | None = None,
    limit: int = MAX_SWEEP_LINES,
) -> None:
    """Lines that aged past the window unmatched without a finding yet, and lines with an
    open `unmatched_statement_line` no longer unmatched (matched by a pass, an import's
    context): up to `limit` of each, through the state index."""
    cutoff = _cutoff(writer.now, window)
    kind = FindingKind.UNMATCHED_STATEMENT_LINE.value
    has_open = (
        select(_F.id)
        .where(
            _F.subject == _LINE.value,
            _F.subject_id == StatementLine.id,
            _F.kind == kind,
            _F.resolved_at.is_(None),
        )
        .exists()
    )
    stale = select(col(StatementLine.id)).where(
        col(StatementLine.state) == LineState.UNMATCHED.value,
        col(StatementLine.date) < cutoff,
        ~has_open,
    )
    if account_id is not None:
        stale = stale.where(col(StatementLine.account_id) == account_id)
    ids = list(session.execute(stale.order_by(col(StatementLine.id)).limit(limit)).scalars())
    settled = (
        select(_F.subject_id)
        .join(StatementLine.__table__, col(StatementLine.id) == _F.subject_id)  # type: ignore[attr-defined]
        .where(
            _F.subject == _LINE.value,
            _F.kind == kind,
            _F.resolved_at.is_(None),
            col(StatementLine.state) != LineState.UNMATCHED.value,
        )
        .limit(limit)
    )
    ids += [int(row) for row in session.execute(settled).scalars()]
    if ids:
        evaluate_lines(session, ids, writer, window=window)


_BREAKS = """
SELECT id, previous, previous_balance + signed, balance FROM (
    SELECT id, balance,
        CASE WHEN direction = 'credit' THEN amount ELSE -amount END AS signed,
        lag(id) OVER w AS previous, lag(balance) OVER w AS previous_balance
    FROM statement_line WHERE account_id = :account AND date BETWEEN :since AND :until
    WINDOW w AS (ORDER BY date, import_id, position)
) AS o
WHERE balance IS NOT NULL AND previous_balance IS NOT NULL
    AND balance <> previous_balance + signed
"""


def evaluate_balance_chain(
    session: Session, account_id: int, since: dt.date, until: dt.date, writer: _Writer
) -> None:
    """`statement_balance_gap` on each stored line of the account in [since, until] whose
    balance does not follow from the previous line's (statement order, as the tie-out reads
    it); open ones on lines of those days that now chain are resolved (a corrected export)."""
    statement = text(_BREAKS).bindparams(
        bindparam("account", account_id),
        bindparam("since", since - CHAIN_OVERLAP, type_=Date()),
        bindparam("until", until, type_=Date()),
    )
    breaks = {int(row[0]): tuple(row[1:]) for row in session.execute(statement)}
    kind = FindingKind.STATEMENT_BALANCE_GAP
    for line_id, (previous, expected, stated) in breaks.items():
        difference = int(stated) - int(expected)
        writer.raise_(
            kind,
            _LINE,
            line_id,
            str(line_id),
            f"the balance before line {line_id} moves {difference} kobo beyond the "
            f"statement's lines (after line {previous}: expected {int(expected)} kobo, the "
            f"statement says {int(stated)} kobo): a line is missing from the export",
        )
    gapped = session.execute(
        select(_F.subject_id)
        .join(StatementLine.__table__, col(StatementLine.id) == _F.subject_id)  # type: ignore[attr-defined]
        .where(
            _F.subject == _LINE.value,
            _F.kind == kind.value,
            _F.resolved_at.is_(None),
            col(StatementLine.account_id) == account_id,
            col(StatementLine.date).between(since - CHAIN_OVERLAP, until),
        )
    ).scalars()
    for line_id in list(gapped):
        if int(line_id) not in breaks:
            writer.resolve(kind, _LINE, int(line_id), str(line_id))


# Subjects -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Coverage:
    """The days the imported wallet statements cover: from the first import's first day to
    the last import's last day (None: no wallet statement imported)."""

    first: dt.date | None
    last: dt.date | None

    def covers(self, day: dt.date, window: dt.timedelta) -> bool:
        """A statement covers `day` plus the window."""
        if self.first is None or self.last is None:
            return False
        return self.first <= day and day + window <= self.last


def wallet_coverage(session: Session) -> Coverage:
    """The wallet statements' coverage (a handful of import rows per account)."""
    accounts = load_accounts(session)
    wallets = [i for i, kind in accounts.kinds.items() if kind is AccountKind.WALLET]
    if not wallets:
        return Coverage(None, None)
    row = session.execute(
        select(
            func.min(col(StatementImport.first_date)), func.max(col(StatementImport.last_date))
        ).where(col(StatementImport.account_id).in_(wallets))
    ).one()
    return Coverage(row[0], row[1])


def _mismatch_detail(items: Sequence[MovementMismatch]) -> str:
    parts = []
    for m in items:
        lines = ", ".join(str(i) for i in m.lines) or "none"
        noun = "line" if len(m.lines) == 1 else "lines"
        parts.append(
            f"{m.role or 'a line the ledger expects nothing of'}: the statement shows "
            f"{abs(m.statement_amount)} kobo ({noun} {lines}), "
            f"the ledger {abs(m.ledger_amount)} kobo"
        )
    return "; ".join(parts)


def evaluate_subjects(
    session: Session,
    keys: Iterable[tuple[SubjectKind, int]],
    writer: _Writer,
    *,
    window: dt.timedelta,
    coverage: Coverage | None = None,
) -> None:
    """Raise or resolve `missing_from_statement` and `statement_mismatch` on each subject,
    from all its matched wallet lines whatever their dates (`statements.tieout.tie_subject`
    over all time)."""
    wanted = sorted(set(keys))
    if not wanted:
        return
    coverage = coverage or wallet_coverage(session)
    accounts = load_accounts(session)
    for chunk_start in range(0, len(wanted), CHUNK):
        chunk = wanted[chunk_start : chunk_start + CHUNK]
        subjects = subjects_by_ids(
            session,
            (i for k, i in chunk if k is SubjectKind.TRANSFER),
            (i for k, i in chunk if k is SubjectKind.COLLECTION),
        )
        by_subject: dict[SubjectRef, list[LineFact]] = defaultdict(list)
        for row in subject_line_rows(session, subjects):
            if accounts.kinds.get(row[1]) is not AccountKind.WALLET:
                continue
            fact = line_fact(row, accounts, subjects)
            if fact.state is LineState.MATCHED and fact.match and fact.match.subject:
                by_subject[fact.match.subject].append(fact)
        open_kinds: dict[tuple[Subject, int], set[str]] = {}
        for kind in (SubjectKind.TRANSFER, SubjectKind.COLLECTION):
            found = open_kinds_by_subject(
                session, subject=_BY_KIND[kind], ids=subjects.ids_of(kind)
            )
            open_kinds |= {(_BY_KIND[kind], i): kinds for i, kinds in found.items()}
        for ref, subject in subjects.facts.items():
            row_id = subjects.ids[ref]
            relay_subject = _BY_KIND[ref.kind]
            lines = sorted(by_subject.get(ref, []), key=lambda line: (line.date, line.id))
            tied = tie_subject(ref, subject, lines, dt.date.min, dt.date.max)
            has = open_kinds.get((relay_subject, row_id), set())
            missing = [
                m
                for m in tied.missing
                if final_at_provider(subject) and coverage.covers(m.date, window)
            ]
            for finding_kind, items, detail in (
                (
                    FindingKind.MISSING_FROM_STATEMENT,
                    missing,
                    "; ".join(
                        f"{m.role} of {m.amount} kobo on {m.date.isoformat()} is on no imported "
                        f"wallet statement (statements cover {coverage.first} to {coverage.last})"
                        for m in missing
                    ),
                ),
                (
                    FindingKind.STATEMENT_MISMATCH,
                    list(tied.mismatches),
                    _mismatch_detail(tied.mismatches),
                ),
            ):
                if items:
                    writer.raise_(finding_kind, relay_subject, row_id, ref.reference, detail)
                elif finding_kind.value in has:
                    writer.resolve(finding_kind, relay_subject, row_id, ref.reference)


def _with_open_findings(session: Session) -> set[tuple[SubjectKind, int]]:
    """The transfers and collections with an open `missing_from_statement` or
    `statement_mismatch` (the open findings: a short list)."""
    rows = session.execute(
        select(_F.subject, _F.subject_id).where(
            _F.kind.in_(
                (FindingKind.MISSING_FROM_STATEMENT.value, FindingKind.STATEMENT_MISMATCH.value)
            ),
            _F.resolved_at.is_(None),
        )
    ).all()
    return {(SubjectKind(subject), int(row_id)) for subject, row_id in rows}


def _period_subjects(
    session: Session, account_id: int, since: dt.date, until: dt.date
) -> set[tuple[SubjectKind, int]]:
    """The subjects of the days [since, until] whose lines do not show exactly what the
    ledger expects (the tie-out's own index-backed query, `periodsums`)."""
    if until < since:
        return set()
    sums = period_sums(session, account_id, since, until, wallet=True)
    return {(SubjectKind(kind), row_id) for kind, row_id in [*sums.unclean, *sums.referenced]}


# Locked periods -------------------------------------------------------------------------------


def _locks(session: Session) -> list[PeriodLock]:
    return list(session.execute(select(PeriodLock).order_by(col(PeriodLock.id))).scalars())


def _lock_of(
    locks: Sequence[PeriodLock], account_id: int | None, day: dt.date
) -> PeriodLock | None:
    for lock in reversed(locks):
        mine = account_id is None or lock.account_id == account_id
        if mine and lock.since <= day <= lock.until:
            return lock
    return None


def _lock_text(lock: PeriodLock, account: str) -> str:
    return (
        f"the locked period {lock.since.isoformat()} to {lock.until.isoformat()} of {account} "
        f"(lock {lock.id}, by {lock.locked_by})"
    )


# Entry points ---------------------------------------------------------------------------------


def after_import(
    session: Session, summary: ImportSummary, *, window: dt.timedelta, now: dt.datetime
) -> Counts:
    """The findings an import calls for, in its transaction: reversals, its lines that are
    unmatched past the window, balance breaks over its days, the subjects it names and those
    of its days (missing, mismatched), and `closed_period_changed` per locked period it adds
    lines to (on the first of them: a big import is one finding a lock, not one a line)."""
    writer = _Writer(session, now)
    if summary.import_id is None:
        return writer.counts
    row = session.get(StatementImport, summary.import_id)
    assert row is not None
    account_id = row.account_id
    accounts = load_accounts(session)
    apply_reversals(session, (int(r["line"]) for r in summary.reversals), writer)
    sweep_lines(session, writer, window=window, account_id=account_id, limit=1_000_000)
    if row.first_date is not None and row.last_date is not None:
        low, high = sorted((row.first_date, row.last_date))
        evaluate_balance_chain(session, account_id, low, high, writer)
        if accounts.kinds.get(account_id) is AccountKind.WALLET:
            # Only subjects whose lines do not show exactly what the ledger expects can need
            # a finding (the tie-out's index-backed query), and those with one open may need
            # it resolved: a clean subject is never loaded, so a month of a million matched
            # payouts costs one query, not a million tie-outs.
            keys = _period_subjects(session, account_id, low, high) | _with_open_findings(session)
            evaluate_subjects(session, keys, writer, window=window)
    for locked in summary.locked_periods:
        first = session.execute(
            select(func.min(col(StatementLine.id)), func.count()).where(
                col(StatementLine.import_id) == summary.import_id,
                col(StatementLine.date).between(
                    dt.date.fromisoformat(locked["since"]), dt.date.fromisoformat(locked["until"])
                ),
            )
        ).one()
        if first[0] is None:
            continue
        lock = session.get(PeriodLock, locked["lock"])
        assert lock is not None
        writer.raise_(
            FindingKind.CLOSED_PERIOD_CHANGED,
            _LINE,
            int(first[0]),
            str(first[0]),
            f"import {summary.import_id} by {row.imported_by} added {first[1]} lines to "
            f"{_lock_text(lock, accounts.names[account_id])}",
        )
    return writer.counts


def _subject_of_record(session: Session, record: dict[str, Any]) -> tuple[SubjectKind, int] | None:
    if record.get("transfer"):
        found = find_by_reference(session, Transfer, record["transfer"])
        return None if found is None or found.id is None else (SubjectKind.TRANSFER, found.id)
    if record.get("collection"):
        other = find_by_reference(session, Collection, record["collection"])
        return None if other is None or other.id is None else (SubjectKind.COLLECTION, other.id)
    return None


def after_line_change(
    session: Session,
    change: LineChange,
    *,
    action: str,
    actor: str,
    window: dt.timedelta,
    now: dt.datetime,
) -> Counts:
    """The findings a line worked by hand (match, unmatch, ignore) calls for: its own (and
    its pair's), its old and new subject's, a reversal it shows, and `closed_period_changed`
    when it lies in a locked period."""
    writer = _Writer(session, now)
    line_id = int(change.after["id"])
    ids = {line_id}
    for record in (change.before, change.after):
        if record.get("line"):
            ids.add(int(record["line"]))
    line = session.get(StatementLine, line_id)
    assert line is not None
    if line.state == LineState.MATCHED and line.role == "reversal" and line.transfer_id:
        transfer = session.get(Transfer, line.transfer_id)
        if transfer is not None and transfer.status == "successful":
            line.reversal_pending = True
            session.add(line)
            session.flush()
            apply_reversals(session, [line_id], writer)
    evaluate_lines(session, ids, writer, window=window)
    keys = {k for r in (change.before, change.after) if (k := _subject_of_record(session, r))}
    evaluate_subjects(session, keys, writer, window=window)
    locks = _locks(session)
    accounts = load_accounts(session)
    for one in ids:
        changed = session.get(StatementLine, one)
        if changed is None or changed.id is None:
            continue
        lock = _lock_of(locks, changed.account_id, changed.date)
        if lock is not None:
            writer.raise_(
                FindingKind.CLOSED_PERIOD_CHANGED,
                _LINE,
                changed.id,
                str(changed.id),
                f"line {changed.id} of {changed.date.isoformat()} was {action} by {actor} "
                f"inside {_lock_text(lock, accounts.names[changed.account_id])}",
            )
    return writer.counts


def after_pass(
    session: Session,
    *,
    changed_lines: Iterable[int],
    reversal_lines: Iterable[int],
    subjects: Iterable[tuple[SubjectKind, int]],
    since: dt.datetime,
    window: dt.timedelta,
    now: dt.datetime,
) -> Counts:
    """The findings of a reconcile pass: the lines it decided again (and their subjects),
    its reversals, the subjects whose status changed since `since` (their relay events,
    through the type-and-time index), a bounded sweep of lines that aged past the window,
    and `closed_period_changed` for a status change inside a locked period."""
    writer = _Writer(session, now)
    changed = sorted(set(changed_lines))
    apply_reversals(session, reversal_lines, writer)
    locks = _locks(session)
    accounts = load_accounts(session)
    for chunk in _chunks(changed):
        for line in list(
            session.execute(select(StatementLine).where(col(StatementLine.id).in_(chunk))).scalars()
        ):
            lock = _lock_of(locks, line.account_id, line.date)
            if lock is not None and line.id is not None:
                writer.raise_(
                    FindingKind.CLOSED_PERIOD_CHANGED,
                    _LINE,
                    line.id,
                    str(line.id),
                    f"line {line.id} of {line.date.isoformat()} became {line.state} in a "
                    f"reconcile pass inside {_lock_text(lock, accounts.names[line.account_id])}",
                )
    evaluate_lines(session, changed, writer, window=window)
    sweep_lines(session, writer, window=window)
    keys = set(subjects)
    events = session.execute(
        select(col(RelayEvent.subject), col(RelayEvent.subject_id), col(RelayEvent.created_at))
        .where(col(RelayEvent.type).in_(STATUS_EVENTS), col(RelayEvent.created_at) >= since)
        .limit(100_000)
    ).all()
    status_changed: dict[tuple[SubjectKind, int], dt.datetime] = {}
    for subject, subject_id, at in events:
        key = (SubjectKind(subject), int(subject_id))
        status_changed[key] = max(at, status_changed.get(key, at))
    keys |= set(status_changed)
    evaluate_subjects(session, keys, writer, window=window)
    wallet_locks = [
        lock for lock in locks if accounts.kinds.get(lock.account_id) is AccountKind.WALLET
    ]
    if wallet_locks and status_changed:
        facts = subjects_by_ids(
            session,
            (i for k, i in status_changed if k is SubjectKind.TRANSFER),
            (i for k, i in status_changed if k is SubjectKind.COLLECTION),
        )
        for (kind, row_id), at in status_changed.items():
            ref = facts.refs.get((kind, row_id))
            if ref is None:
                continue
            subject = facts.facts[ref]
            lock = _lock_of(wallet_locks, None, subject.date)
            if lock is None or at <= lock.locked_at:
                continue
            writer.raise_(
                FindingKind.CLOSED_PERIOD_CHANGED,
                _BY_KIND[kind],
                row_id,
                ref.reference,
                f"{kind} {ref.reference} of {subject.date.isoformat()} became {subject.status} "
                f"at {at.isoformat()} inside {_lock_text(lock, accounts.names[lock.account_id])}",
            )
    return writer.counts


def after_close(
    session: Session, account_id: int, since: dt.date, until: dt.date, *, now: dt.datetime
) -> Counts:
    """A period locked (again) with its tie-out as it stands now: the changes made inside
    it since an earlier lock are accounted for, so their `closed_period_changed` resolve."""
    writer = _Writer(session, now)
    kind = FindingKind.CLOSED_PERIOD_CHANGED
    on_lines = session.execute(
        select(_F.subject_id)
        .join(StatementLine.__table__, col(StatementLine.id) == _F.subject_id)  # type: ignore[attr-defined]
        .where(
            _F.subject == _LINE.value,
            _F.kind == kind.value,
            _F.resolved_at.is_(None),
            col(StatementLine.account_id) == account_id,
            col(StatementLine.date).between(since, until),
        )
    ).scalars()
    for line_id in list(on_lines):
        writer.resolve(kind, _LINE, int(line_id), str(line_id))
    accounts = load_accounts(session)
    if accounts.kinds.get(account_id) is not AccountKind.WALLET:
        return writer.counts
    others = session.execute(
        select(_F.subject, _F.subject_id).where(
            _F.kind == kind.value,
            _F.resolved_at.is_(None),
            and_(_F.subject != _LINE.value),
        )
    ).all()
    keyed = [(SubjectKind(subject), int(row_id)) for subject, row_id in others]
    facts = subjects_by_ids(
        session,
        (i for k, i in keyed if k is SubjectKind.TRANSFER),
        (i for k, i in keyed if k is SubjectKind.COLLECTION),
    )
    for kind_of, row_id in keyed:
        ref = facts.refs.get((kind_of, row_id))
        if ref is not None and since <= facts.facts[ref].date <= until:
            writer.resolve(kind, _BY_KIND[kind_of], row_id, ref.reference)
    return writer.counts


__all__ = [
    "Counts",
    "Subjects",
    "after_close",
    "after_import",
    "after_line_change",
    "after_pass",
]
