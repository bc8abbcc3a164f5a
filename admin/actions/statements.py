"""Statement and period actions: import a statement, match (or confirm a suggestion), unmatch,
ignore a line, close (and lock) a period (docs/rules.md "Statements and period tie-out";
docs/statements.md). Every caller (API, console, CLI) goes through these: each validates, makes
the change in the caller's transaction (never commits), raises the findings the change calls
for, audits once, and raises the typed errors of `admin.errors`.

Signatures (stable):

    import_statement(session, actor, path, *, account=DEFAULT_WALLET, kind=None, format="auto",
                     mapping=None, skip_invalid=False, dry_run=False, file_name=None,
                     window, max_bytes, now) -> ImportSummary
    match(session, actor, line_id, *, transfer=None, collection=None, line=None, now,
          window=DEFAULT_DATE_WINDOW) -> LineChange
    confirm(session, actor, line_id, *, now, window=DEFAULT_DATE_WINDOW) -> LineChange
    unmatch(session, actor, line_id, *, now, window=DEFAULT_DATE_WINDOW) -> LineChange
    ignore(session, actor, line_id, *, ignored_as, note, now, window=DEFAULT_DATE_WINDOW)
        -> LineChange

`window` is PAYRECON_STATEMENT_DATE_WINDOW (how old an unmatched line is before it is a
finding); callers with the settings pass it.
    close_period(session, actor, account, since, until, *, lock=True, now) -> Closed
    tie_out(session, account, since, until) -> TieOut          (a read: no audit)
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from sqlmodel import Session

from admin.actions.actor import Actor, audit
from admin.errors import (
    ConflictError,
    InvalidError,
    InvalidLinesError,
    NotFoundError,
    TooLargeError,
)
from ledger.audit import AuditAction
from ledger.errors import NoteError
from ledger.findings import check_note
from ledger.models import StatementLine
from ledger.queries import MAX_ROW_ID
from ledger.statement_lines import DEFAULT_WALLET, find_account, line_record
from reconcile.reports.errors import PeriodError
from reconcile.reports.period import parse_day
from reconcile.statements import findings, hand
from reconcile.statements import period as periods
from reconcile.statements.errors import (
    AccountError,
    InvalidStatementError,
    LineNotFoundError,
    MatchRefusedError,
)
from reconcile.statements.hand import LineChange
from reconcile.statements.importer import ImportOptions, ImportSummary
from reconcile.statements.importer import import_statement as import_file
from reconcile.statements.period import Closed
from statements.errors import StatementError, StatementTooLargeError
from statements.facts import AccountKind, IgnoreType, LineState
from statements.formats import StatementFormat
from statements.matching import DEFAULT_DATE_WINDOW
from statements.tieout import TieOut

# A reference given to match a line: longer than any transfer's or collection's reference.
MAX_REFERENCE_CHARS = 200
# An account name: as long as the statement_account column keeps.
MAX_ACCOUNT_CHARS = 100

__all__ = [
    "Closed",
    "ImportSummary",
    "LineChange",
    "close_period",
    "confirm",
    "ignore",
    "import_statement",
    "match",
    "tie_out",
    "unmatch",
]


def _account_name(value: object, field: str = "account") -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidError(field, "account must be a non-empty name")
    if len(value) > MAX_ACCOUNT_CHARS or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise InvalidError(
            field, f"account must be at most {MAX_ACCOUNT_CHARS} printable characters"
        )
    return value


def _choice(value: object, choices: type[Any], field: str) -> Any:
    try:
        return choices(value)
    except ValueError:
        names = ", ".join(str(c.value) for c in choices)
        raise InvalidError(field, f"{field} must be one of {names}") from None


def _line_id(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ROW_ID:
        raise InvalidError("line", "a line id is a positive integer")
    return value


def _reference(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_REFERENCE_CHARS:
        raise InvalidError(
            field, f"{field} must be a reference of 1 to {MAX_REFERENCE_CHARS} characters"
        )
    return value


def _note(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidError("note", "note must be a string")
    try:
        return check_note(value)
    except NoteError as exc:
        raise InvalidError("note", str(exc)) from None


def import_statement(
    session: Session,
    actor: Actor,
    path: Path,
    *,
    account: str = DEFAULT_WALLET,
    kind: str | None = None,
    format: str = "auto",
    mapping: str | None = None,
    skip_invalid: bool = False,
    dry_run: bool = False,
    file_name: str | None = None,
    window: dt.timedelta,
    max_bytes: int,
    now: dt.datetime,
) -> ImportSummary:
    """Import the statement file at `path` (named `file_name` in the audit row; the path's
    name by default) into `account`: parse, validate, store new lines, match them and raise
    their findings, audited once as `statement.import` on `statement_import:ID`.

    With `dry_run` everything is done in a savepoint that is rolled back: the summary says
    what would be stored and matched, nothing is stored or audited.

    TooLargeError (413) before reading a file over `max_bytes`; InvalidLinesError (422, every
    invalid line listed; nothing stored) unless `skip_invalid`; InvalidError for a format or
    mapping that cannot be used; ConflictError when the account exists with the other kind."""
    account = _account_name(account)
    wanted_kind = None if kind is None else _choice(kind, AccountKind, "kind")
    wanted_format = _choice(format, StatementFormat, "format")
    options = ImportOptions(
        account=account,
        kind=wanted_kind,
        format=wanted_format,
        mapping=mapping,
        skip_invalid=skip_invalid,
        window=window,
        max_bytes=max_bytes,
        actor=actor.name,
    )
    savepoint = session.begin_nested() if dry_run else None
    try:
        summary = import_file(session, path, options, now=now)
        if not dry_run:
            findings.after_import(session, summary, window=window, now=now)
    except StatementTooLargeError as exc:
        raise TooLargeError(str(exc), exc.limit) from None
    except InvalidStatementError as exc:
        raise InvalidLinesError(str(exc), exc.invalid, exc.total) from None
    except AccountError as exc:
        raise ConflictError(str(exc)) from None
    except StatementError as exc:
        raise InvalidError("file", str(exc)) from None
    finally:
        if savepoint is not None and savepoint.is_active:
            savepoint.rollback()
    if dry_run:
        return summary
    detail = {"file": file_name or path.name, **_counts(summary)}
    audit(
        session,
        actor,
        AuditAction.STATEMENT_IMPORT,
        f"statement_import:{summary.import_id}",
        json.dumps(detail),
        now=now,
    )
    return summary


def _counts(summary: ImportSummary) -> dict[str, Any]:
    data = summary.to_json()
    keys = ("read", "new", "already_known", "matched", "suggested", "unmatched")
    return {key: data[key] for key in keys} | {"invalid": summary.invalid_total}


# What a change did to a line, in a `closed_period_changed` finding's detail.
_DONE = {
    AuditAction.STATEMENT_MATCH: "matched",
    AuditAction.STATEMENT_UNMATCH: "unmatched",
    AuditAction.STATEMENT_IGNORE: "ignored",
}


def _changed(
    session: Session, actor: Actor, action: AuditAction, line_id: int, change: LineChange, *,
    window: dt.timedelta, now: dt.datetime,
) -> LineChange:  # fmt: skip
    findings.after_line_change(
        session, change, action=_DONE[action], actor=actor.name, window=window, now=now
    )
    detail = json.dumps({"before": change.before, "after": change.after})
    audit(session, actor, action, f"statement_line:{line_id}", detail, now=now)
    return change


def _refused(exc: Exception) -> Exception:
    if isinstance(exc, LineNotFoundError):
        return NotFoundError(str(exc))
    return ConflictError(str(exc))


def match(
    session: Session,
    actor: Actor,
    line_id: int,
    *,
    transfer: str | None = None,
    collection: str | None = None,
    line: int | None = None,
    now: dt.datetime,
    window: dt.timedelta = DEFAULT_DATE_WINDOW,
) -> LineChange:
    """Match line `line_id` by hand to a transfer or collection (by its reference or the
    provider's) or to a line of the other account (a funding or settlement pair); exactly
    one of the three. Audited as `statement.match`. InvalidError for a malformed request,
    NotFoundError for no such line, ConflictError when the match makes no sense (the
    reason says why: already matched, wrong direction, amount too far off…)."""
    line_id = _line_id(line_id)
    given = {"transfer": transfer, "collection": collection, "line": line}
    if sum(value is not None for value in given.values()) != 1:
        raise InvalidError(None, "give exactly one of transfer, collection or line")
    if transfer is not None:
        transfer = _reference(transfer, "transfer")
    if collection is not None:
        collection = _reference(collection, "collection")
    if line is not None:
        line = _line_id(line)
    try:
        change = hand.match_line(
            session,
            line_id,
            transfer=transfer,
            collection=collection,
            other_line=line,
            actor=actor.name,
            now=now,
        )
    except (LineNotFoundError, MatchRefusedError) as exc:
        raise _refused(exc) from None
    return _changed(
        session, actor, AuditAction.STATEMENT_MATCH, line_id, change, window=window, now=now
    )


def confirm(
    session: Session,
    actor: Actor,
    line_id: int,
    *,
    now: dt.datetime,
    window: dt.timedelta = DEFAULT_DATE_WINDOW,
) -> LineChange:
    """Confirm line `line_id`'s suggestion: it is matched to what it was suggested for (the
    suggested transfer, collection or other line). ConflictError when the line is not
    suggested; otherwise as `match`."""
    line_id = _line_id(line_id)
    found = session.get(StatementLine, line_id)
    if found is None:
        raise NotFoundError(f"no statement line {line_id}")
    if found.state != LineState.SUGGESTED:
        raise ConflictError(f"line {line_id} is {found.state}, not suggested: nothing to confirm")
    record = line_record(session, found)
    return match(
        session,
        actor,
        line_id,
        transfer=record["transfer"],
        collection=record["collection"],
        line=record["line"],
        now=now,
        window=window,
    )


def unmatch(
    session: Session,
    actor: Actor,
    line_id: int,
    *,
    now: dt.datetime,
    window: dt.timedelta = DEFAULT_DATE_WINDOW,
) -> LineChange:
    """Undo a match, a suggestion or an ignore (the other line of a pair too); the matcher
    leaves the line unmatched from then on. Audited as `statement.unmatch`."""
    line_id = _line_id(line_id)
    try:
        change = hand.unmatch_line(session, line_id, actor=actor.name, now=now)
    except (LineNotFoundError, MatchRefusedError) as exc:
        raise _refused(exc) from None
    return _changed(
        session, actor, AuditAction.STATEMENT_UNMATCH, line_id, change, window=window, now=now
    )


def ignore(
    session: Session,
    actor: Actor,
    line_id: int,
    *,
    ignored_as: str,
    note: str,
    now: dt.datetime,
    window: dt.timedelta = DEFAULT_DATE_WINDOW,
) -> LineChange:
    """Explain a line that belongs to no transfer or collection: `ignored_as` one of funding,
    charge, settlement, other, with a note (required). Audited as `statement.ignore`.
    InvalidError on `as` or `note`; ConflictError for a matched line (unmatch it first)."""
    line_id = _line_id(line_id)
    kind = _choice(ignored_as, IgnoreType, "as")
    text = _note(note)
    try:
        change = hand.ignore_line(
            session, line_id, ignored_as=kind, note=text, actor=actor.name, now=now
        )
    except (LineNotFoundError, MatchRefusedError) as exc:
        raise _refused(exc) from None
    return _changed(
        session, actor, AuditAction.STATEMENT_IGNORE, line_id, change, window=window, now=now
    )


def _period(account: object, since: object, until: object) -> tuple[str, dt.date, dt.date]:
    name = _account_name(account)
    days = []
    for field, value in (("since", since), ("until", until)):
        if isinstance(value, dt.datetime) or not isinstance(value, dt.date | str):
            raise InvalidError(field, f"{field} must be a day, YYYY-MM-DD")
        if isinstance(value, str):
            try:
                value = parse_day(value, option=field)
            except PeriodError:
                raise InvalidError(field, f"{field} must be a day, YYYY-MM-DD") from None
        if not periods.EARLIEST_DAY <= value <= periods.LATEST_DAY:
            raise InvalidError(
                field, f"{field} must be a day from {periods.EARLIEST_DAY} to {periods.LATEST_DAY}"
            )
        days.append(value)
    first, last = days
    if last < first:
        raise InvalidError("until", "until is before since")
    return name, first, last


def tie_out(session: Session, account: str, since: dt.date | str, until: dt.date | str) -> TieOut:
    """The period's tie-out (a read: nothing changed or audited). InvalidError for a malformed
    account or period; NotFoundError when there is no such account."""
    name, first, last = _period(account, since, until)
    try:
        return periods.period_tie_out(session, name, first, last)
    except AccountError as exc:
        raise NotFoundError(str(exc)) from None


def close_period(
    session: Session,
    actor: Actor,
    account: str,
    since: dt.date | str,
    until: dt.date | str,
    *,
    lock: bool = True,
    now: dt.datetime,
) -> Closed:
    """Close the period: its tie-out, and with `lock` a lock recorded with the tie-out as it
    stood (a later import, match or status change touching it raises
    `closed_period_changed`), audited as `period.close` on `period:ACCOUNT:SINCE:UNTIL`.
    Without `lock` it is the tie-out alone (no audit row). Locking again records a new lock
    with the tie-out as it stands then. NotFoundError when there is no such account."""
    name, first, last = _period(account, since, until)
    try:
        closed = periods.close_period(
            session, name, first, last, lock=lock, actor=actor.name, now=now
        )
    except AccountError as exc:
        raise NotFoundError(str(exc)) from None
    if lock:
        found = find_account(session, name)
        assert found is not None and found.id is not None  # the tie-out found it
        findings.after_close(session, found.id, first, last, now=now)
        detail = json.dumps(
            {"tied_out": closed.tie_out.tied_out, "residual": closed.tie_out.residual,
             "lock": closed.lock_id}
        )  # fmt: skip
        subject = f"period:{name}:{first.isoformat()}:{last.isoformat()}"
        audit(session, actor, AuditAction.PERIOD_CLOSE, subject, detail, now=now)
    return closed
