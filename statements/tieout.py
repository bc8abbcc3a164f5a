"""The period tie-out: one account's statement lines and the ledger's subjects over a period
→ the figures, the lists and whether the period ties out to the kobo (docs/rules.md
"Statements and period tie-out", "Period tie-out"). Pure arithmetic; `period close` and the
console render the `TieOut` this builds.

What the ledger says moved (`ledger_movement`):

* each movement the ledger expects of its transfers and collections (`statements.expected`):
  − amount and fee of a payout (successful, failed or reversed), + the amount of a failed
  transfer's refund (so a failed one costs its fee), + the amount of a reversal, + a
  successful collection's amount paid less its fee. A movement counts in the period its
  matched line falls in (the statement says when the money moved); one no line shows yet
  counts on the ledger's date;
* each ignored line, with its own sign, whatever its type: finance's reason says why the
  money moved, the line says which way. Usually a `funding` is a credit on the wallet and a
  debit on the bank, a `settlement` the other way round, a `charge` a debit, `other` either;
  a line ignored against its type's usual way still moved the money its way;
* each line matched to another line (a funding or settlement pair), with its own sign.

`residual` = `statement_movement` − `ledger_movement`, and it is always exactly the sum of
the items that explain it (`explanations`): balance gaps, unmatched and suggested lines,
movements missing from the statement, and mismatches (a movement whose lines in the period
differ from what the ledger expects, or a matched line the ledger expects nothing of).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from statements.expected import Movement, expected_movements
from statements.facts import LineRole, LineState, StatementLine, Subject, SubjectRef


@dataclass(frozen=True, slots=True)
class BalanceGap:
    """A break in the running balance: the statement's balance differs from the previous
    one plus the line's movement (a line is missing from the export). `line` is None for a
    closing balance that does not follow from the last line; `after_line` None for a gap
    before the first line."""

    after_line: int | None
    line: int | None
    expected_balance: int
    stated_balance: int

    @property
    def difference(self) -> int:
        """What the statement's balance moved beyond its lines, in kobo."""
        return self.stated_balance - self.expected_balance


@dataclass(frozen=True, slots=True)
class MovementMismatch:
    """What the lines matched to one movement show in the period against what the ledger
    expects of it there (signed kobo: credits positive); `role` None for lines the ledger
    expects no movement of (e.g. a debit of a transfer still pending)."""

    subject: SubjectRef
    role: LineRole | None
    lines: tuple[int, ...]
    statement_amount: int
    ledger_amount: int

    @property
    def difference(self) -> int:
        """The mismatch's share of the residual."""
        return self.statement_amount - self.ledger_amount


@dataclass(frozen=True, slots=True)
class Explanation:
    """One item that explains the residual, with its share of it in signed kobo."""

    kind: str  # balance_gap | unmatched_line | suggested_line | missing_from_statement | mismatch
    text: str
    amount: int


@dataclass(frozen=True, slots=True)
class TieOut:
    """The tie-out of one account over one period (`to_json` gives the contract's keys)."""

    account: str
    since: dt.date
    until: dt.date
    opening_balance: int
    closing_balance: int
    credits: int
    debits: int
    ledger_movement: int
    matched_count: int
    matched_amount: int
    suggested_lines: tuple[StatementLine, ...]
    unmatched_lines: tuple[StatementLine, ...]
    missing_from_statement: tuple[Movement, ...]
    mismatches: tuple[MovementMismatch, ...]
    balance_gaps: tuple[BalanceGap, ...]

    @property
    def statement_movement(self) -> int:
        """What the statement's balance moved over the period."""
        return self.closing_balance - self.opening_balance

    @property
    def residual(self) -> int:
        """What the statement moved that the ledger does not say moved."""
        return self.statement_movement - self.ledger_movement

    @property
    def tied_out(self) -> bool:
        """Residual 0, every line matched or ignored, nothing missing from the statement."""
        return (
            self.residual == 0
            and not self.unmatched_lines
            and not self.suggested_lines
            and not self.missing_from_statement
        )

    def explanations(self) -> list[Explanation]:
        """Every item that explains the residual; their amounts add up to it exactly."""
        items = [
            Explanation(
                "balance_gap",
                f"the balance moves {naira(gap.difference)} "
                + (f"before line {gap.line}" if gap.line is not None else "at the close")
                + " beyond the statement's lines (a line missing from the export)",
                gap.difference,
            )
            for gap in self.balance_gaps
        ]
        for state, lines in (
            ("unmatched", self.unmatched_lines),
            ("suggested", self.suggested_lines),
        ):
            items += [
                Explanation(
                    f"{state}_line",
                    f"line {line.id} of {line.date.isoformat()}, {naira(line.signed_amount)}"
                    f" ({line.reference or line.narration}), is {state}",
                    line.signed_amount,
                )
                for line in lines
            ]
        items += [
            Explanation(
                "missing_from_statement",
                f"{movement.subject.kind} {movement.subject.reference}'s {movement.role}"
                f" of {naira(movement.signed_amount)} on {movement.date.isoformat()}"
                " is not on the statement",
                -movement.signed_amount,
            )
            for movement in self.missing_from_statement
        ]
        items += [
            Explanation(
                "mismatch",
                f"{m.subject.kind} {m.subject.reference}'s {m.role or 'unexpected line'}:"
                f" the statement shows {naira(m.statement_amount)}, the ledger"
                f" {naira(m.ledger_amount)}",
                m.difference,
            )
            for m in self.mismatches
        ]
        return items

    def summary(self) -> str:
        """One sentence: whether the period ties out, and if not how much by how many items."""
        if self.tied_out:
            return "The period ties out to the kobo."
        count = len(self.explanations())
        return (
            f"The period does not tie out: residual {naira(self.residual)},"
            f" explained by {count} item{'' if count == 1 else 's'}."
        )

    def to_json(self) -> dict[str, object]:
        """The contract's keys (docs/rules.md "Period tie-out"); money in kobo, dates ISO."""

        def line_json(line: StatementLine) -> dict[str, object]:
            return {
                "id": line.id,
                "date": line.date.isoformat(),
                "amount": line.amount,
                "direction": str(line.direction),
                "reference": line.reference,
                "narration": line.narration,
            }

        return {
            "account": self.account,
            "since": self.since.isoformat(),
            "until": self.until.isoformat(),
            "opening_balance": self.opening_balance,
            "closing_balance": self.closing_balance,
            "credits": self.credits,
            "debits": self.debits,
            "statement_movement": self.statement_movement,
            "ledger_movement": self.ledger_movement,
            "residual": self.residual,
            "matched": {"count": self.matched_count, "amount": self.matched_amount},
            "suggested": {
                "count": len(self.suggested_lines),
                "amount": sum(line.amount for line in self.suggested_lines),
            },
            "unmatched_lines": [line_json(line) for line in self.unmatched_lines],
            "missing_from_statement": [
                {
                    "kind": str(m.subject.kind),
                    "reference": m.subject.reference,
                    "role": str(m.role),
                    "direction": str(m.direction),
                    "amount": m.amount,
                    "date": m.date.isoformat(),
                }
                for m in self.missing_from_statement
            ],
            "mismatches": [
                {
                    "kind": str(m.subject.kind),
                    "reference": m.subject.reference,
                    "role": None if m.role is None else str(m.role),
                    "lines": list(m.lines),
                    "statement_amount": m.statement_amount,
                    "ledger_amount": m.ledger_amount,
                    "difference": m.difference,
                }
                for m in self.mismatches
            ],
            "balance_gaps": [
                {
                    "after_line": gap.after_line,
                    "line": gap.line,
                    "expected_balance": gap.expected_balance,
                    "stated_balance": gap.stated_balance,
                    "difference": gap.difference,
                }
                for gap in self.balance_gaps
            ],
            "tied_out": self.tied_out,
        }


def naira(kobo: int) -> str:
    """Kobo as naira for people: `-₦1,234.50`."""
    sign = "-" if kobo < 0 else ""
    whole, part = divmod(abs(kobo), 100)
    return f"{sign}₦{whole:,}.{part:02d}"


def chain_gaps(opening: int, closing: int, lines: Iterable[StatementLine]) -> list[BalanceGap]:
    """Where the running balance does not chain from `opening` through `lines` (in statement
    order) to `closing`; a line without a balance is taken to chain. The gaps add up to
    (closing − opening) − (credits − debits) exactly."""
    gaps: list[BalanceGap] = []
    running, previous = opening, None
    for line in lines:
        expected = running + line.signed_amount
        if line.balance is not None and line.balance != expected:
            gaps.append(BalanceGap(previous, line.id, expected, line.balance))
        running = expected if line.balance is None else line.balance
        previous = line.id
    if closing != running:
        gaps.append(BalanceGap(previous, None, running, closing))
    return gaps


@dataclass(frozen=True, slots=True)
class SubjectTie:
    """One subject's share of a tie-out: what the ledger says it moved in the period, and
    its movements missing from the statement or mismatched there."""

    ledger: int
    missing: tuple[Movement, ...]
    mismatches: tuple[MovementMismatch, ...]


def tie_subject(
    ref: SubjectRef,
    subject: Subject | None,
    matched: Sequence[StatementLine],
    since: dt.date,
    until: dt.date,
) -> SubjectTie:
    """Tie out one subject over [since, until]: `matched` are the account's lines matched to
    it (in statement order) that the tie-out sees. A movement counts in the period its
    matched line falls in, one no line shows yet on the ledger's date."""

    def in_range(day: dt.date) -> bool:
        return since <= day <= until

    ledger = 0
    missing: list[Movement] = []
    mismatches: list[MovementMismatch] = []
    taken = {line.match.role for line in matched if line.match and line.match.role}
    movements = [] if subject is None else expected_movements(subject, taken)
    roles = {movement.role for movement in movements}
    for movement in movements:
        shown = [line for line in matched if line.match and line.match.role is movement.role]
        day = min((line.date for line in shown), default=movement.date)
        expected = movement.signed_amount if in_range(day) else 0
        ledger += expected
        shown_in = [line for line in shown if in_range(line.date)]
        statement = sum(line.signed_amount for line in shown_in)
        if statement == expected:
            continue
        if shown:
            ids = tuple(line.id for line in shown_in)
            mismatches.append(MovementMismatch(ref, movement.role, ids, statement, expected))
        else:
            missing.append(movement)
    stray = [
        line
        for line in matched
        if in_range(line.date) and (line.match is None or line.match.role not in roles)
    ]
    if stray:
        amount = sum(line.signed_amount for line in stray)
        ids = tuple(line.id for line in stray)
        mismatches.append(MovementMismatch(ref, None, ids, amount, 0))
    return SubjectTie(ledger, tuple(missing), tuple(mismatches))


def tie_out(
    *,
    account: str,
    since: dt.date,
    until: dt.date,
    opening_balance: int,
    closing_balance: int,
    lines: Iterable[StatementLine],
    subjects: Iterable[Subject],
) -> TieOut:
    """Tie out `account` over [since, until] (both included).

    `lines` are the account's lines dated in the period, in statement order, and any line of
    the account matched to one of `subjects` whatever its date (it says when that movement
    happened); `subjects` are the transfers and collections dated in the period and those
    matched by a line of the period. The balances are the statement's before the period's
    first line and after its last."""
    mine = [line for line in lines if line.account == account]
    in_period = sorted(
        (line for line in mine if since <= line.date <= until), key=lambda line: line.date
    )
    by_subject: dict[SubjectRef, list[StatementLine]] = defaultdict(list)
    ledger = 0
    unmatched: list[StatementLine] = []
    suggested: list[StatementLine] = []
    for line in mine:
        match = line.match
        if line.state is LineState.MATCHED and match is not None and match.subject is not None:
            by_subject[match.subject].append(line)
    for line in in_period:
        match = line.match
        if line.state is LineState.IGNORED:
            ledger += line.signed_amount
        elif line.state is LineState.SUGGESTED:
            suggested.append(line)
        elif line.state is LineState.MATCHED and match is not None and match.subject is not None:
            pass  # counted with its subject below
        elif line.state is LineState.MATCHED and match is not None and match.line is not None:
            ledger += line.signed_amount  # a funding or settlement pair
        else:
            unmatched.append(line)  # (a line "matched" to nothing is as good as unmatched)

    missing: list[Movement] = []
    mismatches: list[MovementMismatch] = []
    known: dict[SubjectRef, Subject] = {}
    for fact in subjects:
        known.setdefault(fact.ref, fact)
    for ref in sorted(set(known) | set(by_subject), key=lambda r: (r.kind, r.reference)):
        tied = tie_subject(ref, known.get(ref), by_subject.get(ref, []), since, until)
        ledger += tied.ledger
        missing += tied.missing
        mismatches += tied.mismatches
    as_unmatched = {line.id for line in unmatched}
    matched_in = [
        line
        for line in in_period
        if line.state is LineState.MATCHED and line.id not in as_unmatched
    ]
    return TieOut(
        account=account,
        since=since,
        until=until,
        opening_balance=opening_balance,
        closing_balance=closing_balance,
        credits=sum(line.amount for line in in_period if line.signed_amount > 0),
        debits=sum(line.amount for line in in_period if line.signed_amount < 0),
        ledger_movement=ledger,
        matched_count=len(matched_in),
        matched_amount=sum(line.amount for line in matched_in),
        suggested_lines=tuple(suggested),
        unmatched_lines=tuple(unmatched),
        missing_from_statement=tuple(missing),
        mismatches=tuple(mismatches),
        balance_gaps=tuple(chain_gaps(opening_balance, closing_balance, in_period)),
    )
