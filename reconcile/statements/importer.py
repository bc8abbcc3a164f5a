"""`statement import`: a statement file into the ledger, in one transaction (docs/rules.md
"Statements and period tie-out", Import rules; docs/statements.md "Importing a statement").

The file is refused before parsing when larger than PAYRECON_STATEMENT_MAX_BYTES, then read
once, as it streams: each line gets its identity (`statements.identity`), the balance chain is
checked (`statements.balances`), and lines are stored and matched in batches — the lines an
earlier export already brought are counted as `already_known`. When a line is invalid the
rest of the file is still read, to list every invalid line, but nothing more is stored, and
the caller's transaction is rolled back (InvalidStatementError) unless `skip_invalid`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

from sqlalchemy import func, select, update
from sqlmodel import Session, col

from ledger.bulk import Bulk, table_columns
from ledger.models import PeriodLock, StatementAccount, StatementImport, StatementLine
from ledger.statement_lines import find_account
from ledger.statistics import analyze_if_grown
from ledger.types import storable_text
from reconcile.statements.errors import AccountError, InvalidStatementError
from reconcile.statements.facts import in_json, load_accounts
from reconcile.statements.matcher import Considered, consider, mark_reversals, match_columns
from statements.balances import BalanceBreak, balance_breaks
from statements.errors import StatementTooLargeError
from statements.facts import AccountKind, LineState
from statements.facts import StatementLine as LineFact
from statements.formats import StatementFormat, parse_statement
from statements.identity import line_identities
from statements.lines import InvalidLine, ParsedLine, StatedBalances
from statements.mapping import load_mapping

BATCH_LINES = 5_000
# A file of nothing but bad lines lists the first ones; the count says how many there were.
MAX_LISTED_INVALID = 1_000
INSERT_COLUMNS = (
    "id",
    "account_id",
    "identity",
    "date",
    "value_date",
    "amount",
    "direction",
    "balance",
    "reference",
    "narration",
    "import_id",
    "file_line",
    "position",
    "state",
    "transfer_id",
    "collection_id",
    "other_line_id",
    "role",
    "matched_by",
    "matched_at",
    "reversal_pending",
    "event_sequence",
)


@dataclass(frozen=True)
class ImportOptions:
    """What `statement import` was asked (already checked by the command)."""

    account: str = "provider-wallet"
    kind: AccountKind | None = None
    format: StatementFormat = StatementFormat.AUTO
    mapping: str | None = None
    skip_invalid: bool = False
    window: dt.timedelta = dt.timedelta(days=2)
    max_bytes: int = 200_000_000
    actor: str = "cli"


@dataclass
class ImportSummary:
    """What an import read, stored and matched (the contract's summary keys first)."""

    read: int = 0
    new: int = 0
    already_known: int = 0
    invalid: list[dict[str, Any]] = field(default_factory=list)
    invalid_total: int = 0
    states: Counter[str] = field(default_factory=Counter)
    reversals: list[dict[str, Any]] = field(default_factory=list)
    balance_breaks: list[dict[str, Any]] = field(default_factory=list)
    locked_periods: list[dict[str, Any]] = field(default_factory=list)
    account: str = ""
    format: str = ""
    import_id: int | None = None
    first_date: dt.date | None = None  # the statement's first and last days
    last_date: dt.date | None = None

    def to_json(self) -> dict[str, Any]:
        """`statement import --json` (and the API's 201 body)."""
        return {
            "read": self.read,
            "new": self.new,
            "already_known": self.already_known,
            "invalid": self.invalid,
            "matched": self.states[LineState.MATCHED],
            "suggested": self.states[LineState.SUGGESTED],
            "unmatched": self.states[LineState.UNMATCHED],
            "invalid_total": self.invalid_total,
            "account": self.account,
            "format": self.format,
            "import": self.import_id,
            "reversals": self.reversals,
            "balance_breaks": self.balance_breaks,
            "locked_periods": self.locked_periods,
        }


class _LiveBalances:
    """The balances a format states, read when the balance check asks (the closing one is
    known only once the file is read)."""

    def __init__(self, stated: Any) -> None:
        self._stated = stated

    @property
    def opening(self) -> int | None:
        return cast(StatedBalances, self._stated()).opening

    @property
    def closing(self) -> int | None:
        return cast(StatedBalances, self._stated()).closing


def account_for(session: Session, name: str, kind: AccountKind | None) -> StatementAccount:
    """The account called `name`, created with `kind` (default wallet) the first time;
    AccountError when it exists with the other kind."""
    account = find_account(session, name)
    if account is None:
        account = StatementAccount(name=name, kind=str(kind or AccountKind.WALLET))
        session.add(account)
        session.flush()
    elif kind is not None and account.kind != kind:
        raise AccountError(f"account {name!r} is a {account.kind} account, not {kind}")
    return account


def import_statement(
    session: Session, path: Path, options: ImportOptions, *, now: dt.datetime
) -> ImportSummary:
    """Import the statement at `path` in `session`'s transaction (the caller commits, or
    rolls back for a dry run). StatementTooLargeError before reading a file over the limit;
    StatementError (format, mapping) and InvalidStatementError when nothing can be stored;
    AccountError for an account of the other kind."""
    size = os.stat(path).st_size
    if size > options.max_bytes:
        raise StatementTooLargeError(size, options.max_bytes)
    mapping = load_mapping(options.mapping) if options.mapping else None
    sha256 = _sha256(path)
    with path.open("rb") as raw:
        parsed = parse_statement(
            cast(BinaryIO, raw), format=options.format, mapping=mapping, filename=path.name
        )
        account = account_for(session, options.account, options.kind)
        assert account.id is not None  # flushed
        row = StatementImport(
            account_id=account.id,
            file_name=storable_text(path.name),
            format=str(parsed.format),
            mapping=None if mapping is None else mapping.name,
            sha256=sha256,
            size=size,
            imported_by=options.actor,
            imported_at=now,
        )
        session.add(row)
        session.flush()
        run = _Run(session, account, row, options, now)
        try:
            run.summary.format = str(parsed.format)
            live = cast(StatedBalances, _LiveBalances(parsed.stated))
            breaks = list(balance_breaks(run.lines(parsed.lines), live))
            run.flush()
        finally:
            run.close()
    summary = run.summary
    if summary.invalid_total and not options.skip_invalid:
        raise InvalidStatementError(summary.invalid, summary.invalid_total)
    stated = parsed.stated()
    summary.balance_breaks = [_break_json(b) for b in breaks]
    run.finish(stated)
    # A month imported is closed next: its lines must be in the planner's statistics.
    analyze_if_grown(session, "statement_line", summary.new)
    return summary


def _sha256(path: Path) -> str:
    # Read apart from the parse: XLSX is a zip, which the parser reads by seeking.
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _break_json(gap: BalanceBreak) -> dict[str, Any]:
    return {
        "after_line": gap.after_line,
        "before_line": gap.before_line,
        "expected": gap.expected,
        "stated": gap.stated,
        "difference": gap.difference,
    }


class _Run:
    """One import under way: the batch being filled, and what was seen so far."""

    def __init__(
        self,
        session: Session,
        account: StatementAccount,
        row: StatementImport,
        options: ImportOptions,
        now: dt.datetime,
    ) -> None:
        self.session = session
        self.account = account
        self.row = row
        self.options = options
        self.now = now
        self.summary = ImportSummary(account=account.name)
        self.batch: list[tuple[ParsedLine, str]] = []
        self.accounts = load_accounts(session)
        self.bulk = Bulk(session.connection())
        self.columns = table_columns(StatementLine.__table__, INSERT_COLUMNS)  # type: ignore[attr-defined]
        self.first: ParsedLine | None = None
        self.last: ParsedLine | None = None
        self.ascending: bool | None = None
        self.id_ranges: list[tuple[int, int]] = []
        self.new_dates: tuple[dt.date, dt.date] | None = None
        self.matched_at = self.bulk.time(now)  # every line the import matches, as stored
        self.kind = AccountKind(account.kind)
        # PostgreSQL stores a batch while the next one is read: the server works on another
        # core, and the import waits for the batch before its next statement.
        self.storing: Future[Any] | None = None
        self.storer = ThreadPoolExecutor(1) if self.bulk.postgres else None
        # The first and last days of the account's lines before this import (two ends of
        # the statement-order index), read before any line of it is stored.
        # (One aggregate a query: SQLite reads a lone min or max from the index's end.)
        first, last = (
            session.execute(
                select(end(StatementLine.date)).where(col(StatementLine.account_id) == account.id)
            ).scalar()
            for end in (func.min, func.max)
        )
        self.stored_days: tuple[dt.date, dt.date] | None = (
            None if first is None or last is None else (first, last)
        )

    def lines(self, items: Iterator[ParsedLine | InvalidLine]) -> Iterator[ParsedLine]:
        """The valid lines of the file, each stored (in batches) as it passes on to the
        balance check; invalid ones are listed."""
        latest: list[ParsedLine] = []

        def valid() -> Iterator[ParsedLine]:
            for item in items:
                if isinstance(item, InvalidLine):
                    self.summary.invalid_total += 1
                    if len(self.summary.invalid) < MAX_LISTED_INVALID:
                        self.summary.invalid.append({"line": item.number, "reason": item.reason})
                    continue
                latest[:] = [item]
                yield item

        for identity in line_identities(valid(), account=self.account.name):
            line = latest[0]
            self._see(line)
            self.batch.append((line, identity))
            if len(self.batch) >= BATCH_LINES:
                self.flush()
            yield line

    def _see(self, line: ParsedLine) -> None:
        self.summary.read += 1
        if self.first is None:
            self.first = line
        elif self.ascending is None and line.date != self.first.date:
            self.ascending = line.date > self.first.date
        self.last = line

    def flush(self) -> None:
        """Store the batch's new lines with the matcher's decisions (nothing once a line was
        invalid and invalid lines are not skipped: the import will be refused)."""
        batch, self.batch = self.batch, []
        self.wait()
        if not batch:
            return
        known = self._known(batch)
        self.summary.already_known += sum(1 for _, identity in batch if identity in known)
        fresh = [(line, identity) for line, identity in batch if identity not in known]
        if not fresh or (self.summary.invalid_total and not self.options.skip_invalid):
            self.summary.new += len(fresh)
            return
        ids = self.bulk.reserved(
            self.bulk.send([self.bulk.reserve_ids("statement_line", len(fresh))])[0], len(fresh)
        )
        self.id_ranges.append((ids[0], ids[-1]))
        facts = [self._fact(line, line_id) for (line, _), line_id in zip(fresh, ids, strict=True)]
        considered = consider(self.session, facts, self.accounts, window=self.options.window)
        decisions = {d.line: d for d in considered.matching.decisions}
        rows = []
        for (line, identity), fact in zip(fresh, facts, strict=True):
            decision = decisions[fact.id]
            values = match_columns(decision, considered.subjects, now=self.now)
            self.summary.states[str(values["state"])] += 1
            rows.append(self._row(line, identity, fact, values))
        inserts = self.bulk.insert("statement_line", self.columns, rows)
        alone = not considered.matching.reversals and not any(
            decision.changed for decision in considered.stored.values()
        )
        if self.storer is not None and alone:
            # Nothing else to write for this batch: the rows go while the next is read.
            self.storing = self.storer.submit(self.bulk.send, inserts)
        else:
            self.bulk.send(inserts)
            self._store_context(considered)
        self.summary.new += len(fresh)
        dates = [line.date for line, _ in fresh]
        low, high = min(dates), max(dates)
        if self.new_dates is not None:
            low, high = min(low, self.new_dates[0]), max(high, self.new_dates[1])
        self.new_dates = (low, high)

    def wait(self) -> None:
        """Wait for the batch being stored (its error, if any, is raised here)."""
        storing, self.storing = self.storing, None
        if storing is not None:
            storing.result()

    def close(self) -> None:
        """Wait for the last batch and stop the storing thread (also when the import failed:
        the caller's rollback must not meet a statement under way)."""
        try:
            self.wait()
        finally:
            if self.storer is not None:
                self.storer.shutdown(wait=True)

    def _store_context(self, considered: Considered) -> None:
        def mine(line_id: int) -> bool:
            return any(low <= line_id <= high for low, high in self.id_ranges)

        before = {line.id: line.state for line in considered.context}
        for decision in considered.stored.values():
            if not decision.changed:
                continue
            values = match_columns(decision, considered.subjects, now=self.now)
            self.session.execute(
                update(StatementLine).where(col(StatementLine.id) == decision.line).values(**values)
            )
            if mine(decision.line):
                self.summary.states[str(before[decision.line])] -= 1
                self.summary.states[str(values["state"])] += 1
        reversals = considered.matching.reversals
        mark_reversals(self.session, (r.line for r in reversals))
        self.summary.reversals += [
            {"line": r.line, "transfer": r.subject.reference, "date": r.date.isoformat()}
            for r in reversals
        ]

    def _known(self, batch: list[tuple[ParsedLine, str]]) -> set[str]:
        """The batch's identities already stored for the account. An identity holds the
        line's date, so a batch dated outside the days the account's lines spanned before
        this import (`stored_days`: a first import, or the new days of a later one) holds
        none, and its identities are not looked up one by one."""
        dates = [line.date for line, _ in batch]
        if self.stored_days is None or not (
            self.stored_days[0] <= max(dates) and min(dates) <= self.stored_days[1]
        ):
            return set()
        identities = [identity for _, identity in batch]
        found = self.session.execute(
            select(StatementLine.identity).where(  # type: ignore[call-overload]
                col(StatementLine.account_id) == self.account.id,
                in_json(self.session, "statement_line.identity", identities, "identities"),
            )
        )
        return {row[0] for row in found}

    def _fact(self, line: ParsedLine, line_id: int) -> LineFact:
        return LineFact(
            id=line_id,
            account=self.account.name,
            account_kind=self.kind,
            date=line.date,
            amount=line.amount,
            direction=line.direction,
            reference=storable_text(line.reference),
            narration=storable_text(line.narration),
            balance=line.balance,
        )

    def _row(
        self, line: ParsedLine, identity: str, fact: LineFact, values: dict[str, Any]
    ) -> list[Any]:
        sqlite = not self.bulk.postgres
        day = line.date.isoformat() if sqlite else line.date
        value_day = line.value_date
        if value_day is not None and sqlite:
            value_day = value_day.isoformat()  # type: ignore[assignment]
        return [
            fact.id,
            self.account.id,
            identity,
            day,
            value_day,
            line.amount,
            str(line.direction),
            line.balance,
            fact.reference,  # storable_text, as the matcher saw it
            fact.narration,
            self.row.id,
            line.number,
            line.number,
            values["state"],
            values["transfer_id"],
            values["collection_id"],
            values["other_line_id"],
            values["role"],
            values["matched_by"],
            None if values["matched_at"] is None else self.matched_at,
            False,
            0,
        ]

    def finish(self, stated: StatedBalances) -> None:
        """Fill in the import's row: counts, dates, balances, breaks, locked periods."""
        row, summary = self.row, self.summary
        if self.ascending is False:
            # A newest-first file: statement order is the file's order reversed.
            self.session.execute(
                update(StatementLine)
                .where(
                    col(StatementLine.account_id) == self.account.id,
                    col(StatementLine.import_id) == row.id,
                )
                .values(position=-col(StatementLine.file_line))
            )
        first, last = self.first, self.last
        if first is not None and last is not None and self.ascending is False:
            first, last = last, first
        row.read, row.new, row.already_known = summary.read, summary.new, summary.already_known
        row.invalid = summary.invalid_total
        row.matched = summary.states[LineState.MATCHED]
        row.suggested = summary.states[LineState.SUGGESTED]
        row.unmatched = summary.states[LineState.UNMATCHED]
        if first is not None and last is not None:
            row.first_date, row.last_date = first.date, last.date
            summary.first_date, summary.last_date = first.date, last.date
            opening = stated.opening
            if opening is None and first.balance is not None:
                opening = first.balance - first.signed_amount
            row.opening_balance = opening
            row.closing_balance = stated.closing if stated.closing is not None else last.balance
        summary.locked_periods = self._locked()
        row.balance_breaks = json.dumps(summary.balance_breaks)
        row.reversals = json.dumps(summary.reversals)
        row.locked_periods = json.dumps(summary.locked_periods)
        summary.import_id = row.id
        self.session.add(row)
        self.session.flush()

    def _locked(self) -> list[dict[str, Any]]:
        """The locked periods of the account the new lines fall in (`closed_period_changed`
        is raised from this record)."""
        if self.new_dates is None:
            return []
        low, high = self.new_dates
        locks = self.session.execute(
            select(PeriodLock).where(
                col(PeriodLock.account_id) == self.account.id,
                col(PeriodLock.since) <= high,
                col(PeriodLock.until) >= low,
            )
        ).scalars()
        touched = []
        for lock in locks:
            count = self.session.execute(
                select(StatementLine.id)  # type: ignore[call-overload]
                .where(
                    col(StatementLine.account_id) == self.account.id,
                    col(StatementLine.date).between(lock.since, lock.until),
                    col(StatementLine.import_id) == self.row.id,
                )
                .limit(1)
            ).first()
            if count is not None:
                touched.append(
                    {
                        "lock": lock.id,
                        "since": lock.since.isoformat(),
                        "until": lock.until.isoformat(),
                    }
                )
        return touched
