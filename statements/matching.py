"""The matcher: statement lines and the ledger's facts → a decision per line (docs/rules.md
"Statements and period tie-out", "Matching"). Pure; the import shell and every reconcile
pass feed it the lines to (re)consider and the subjects they may belong to, and store what
it decides.

The order:

1. **By reference.** A wallet line whose reference or narration names exactly one subject
   (the longest reference found wins; see `statements.tokens`) belongs to it. Debits fill
   the payout — one line of amount + fee, or two lines (amount, fee) — lines of the exact
   figures first; a failed transfer's credit is its refund, a successful or reversed one's
   its reversal (a reversal the ledger does not know yet is reported in `reversals`, source
   `statement`); a successful collection's credit its collection credit (amount paid less
   fee). A line whose figure differs is matched all the same and reported in `mismatches`.
   Once a subject's movement is on the statement, another line naming it is a duplicate and
   stays **unmatched** (a fee charged twice is for a person to look at, not to absorb into
   a match). A credit naming a subject the ledger still holds pending stays unmatched until
   a later pass, when its outcome is known (a refund and a reversal look alike until then).
2. **By amount and date.** A line that names no subject (bank lines never do) is
   **suggested**, never matched, when it has exactly one candidate and is that candidate's
   only line: an open payout, refund or collection credit of the same amount whose date is
   within the window, or — across a wallet and a bank account — a line of the other
   direction and the same amount (a funding, or a settlement) within the window.
3. Otherwise the line is unmatched.

Matched and ignored lines are never changed (their mismatches are reported again, since the
ledger's figures can change); suggested lines are considered afresh.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from statements.expected import (
    Movement,
    expected_movements,
    final_at_provider,
    ledger_figure,
)
from statements.facts import (
    AccountKind,
    LineMatch,
    LineRole,
    LineState,
    StatementLine,
    Subject,
    SubjectKind,
    SubjectRef,
    SubjectStatus,
)
from statements.lines import Direction
from statements.tokens import reference_key, reference_tokens

# PAYRECON_STATEMENT_DATE_WINDOW's default, beside the rule it feeds.
DEFAULT_DATE_WINDOW = dt.timedelta(days=2)

_DEBIT_ORDER = (LineRole.PAYOUT, LineRole.PAYOUT_AMOUNT, LineRole.PAYOUT_FEE)
_KEPT = frozenset({LineState.MATCHED, LineState.IGNORED})


@dataclass(frozen=True, slots=True)
class Decision:
    """What becomes of one line: its state, its match (matched or suggested), why it is left
    unmatched (for people), and whether that differs from what is stored."""

    line: int
    state: LineState
    match: LineMatch | None = None
    reason: str = ""
    changed: bool = False


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A matched line whose figure differs from the ledger's (`statement_mismatch`)."""

    line: int
    subject: SubjectRef
    role: LineRole
    statement_amount: int
    ledger_amount: int


@dataclass(frozen=True, slots=True)
class Reversal:
    """A credit matched to a transfer the ledger holds successful: a reversal, source
    `statement` (docs/rules.md "Reversals")."""

    line: int
    subject: SubjectRef
    date: dt.date
    source: str = "statement"


@dataclass(frozen=True, slots=True)
class Matching:
    """The matcher's answer: a decision per line given (in their order) and the facts."""

    decisions: tuple[Decision, ...]
    mismatches: tuple[Mismatch, ...]
    reversals: tuple[Reversal, ...]


class ReferenceIndex:
    """The subjects by their references' keys (merchant's and provider's)."""

    def __init__(self, subjects: Iterable[Subject]) -> None:
        self._by_key: dict[str, set[SubjectRef]] = defaultdict(set)
        for subject in subjects:
            for reference in (subject.reference, subject.provider_reference):
                if reference:
                    self._by_key[reference_key(reference)].add(subject.ref)

    def named_by(self, line: StatementLine, tokens: set[str] | None = None) -> set[SubjectRef]:
        """The subjects the line names by its longest reference found (more than one: the
        line is ambiguous; none: it names no subject); `tokens` are the line's
        `reference_tokens` when the caller has them already."""
        if tokens is None:
            tokens = reference_tokens(line.reference, line.narration)
        hits = [t for t in tokens if t in self._by_key]
        if not hits:
            return set()
        longest = max(map(len, hits))
        return set().union(*(self._by_key[t] for t in hits if len(t) == longest))


def open_slots(subject: Subject, taken: Iterable[LineRole]) -> list[LineRole]:
    """The roles still open for a new line of `subject`, given those already taken; a
    reversal is open for a successful or reversed transfer, a refund for a failed one."""
    taken = set(taken)
    if subject.kind is SubjectKind.COLLECTION:
        if subject.status is not SubjectStatus.SUCCESSFUL or LineRole.COLLECTION_CREDIT in taken:
            return []
        return [LineRole.COLLECTION_CREDIT]
    slots: list[LineRole] = []
    if LineRole.PAYOUT not in taken:
        has_amount, has_fee = LineRole.PAYOUT_AMOUNT in taken, LineRole.PAYOUT_FEE in taken
        if not (has_amount or has_fee):
            slots += [LineRole.PAYOUT, LineRole.PAYOUT_AMOUNT]
        elif not has_amount:
            slots.append(LineRole.PAYOUT_AMOUNT)
        if not has_fee and subject.fee > 0:
            slots.append(LineRole.PAYOUT_FEE)
    credit = {
        SubjectStatus.FAILED: LineRole.REFUND,
        SubjectStatus.SUCCESSFUL: LineRole.REVERSAL,
        SubjectStatus.REVERSED: LineRole.REVERSAL,
    }.get(subject.status)
    if credit is not None and credit not in taken:
        slots.append(credit)
    return slots


def _close(slots: list[LineRole], role: LineRole) -> None:
    """Take `role`: a payout in one line closes the two-line form and the other way round."""
    if role is LineRole.PAYOUT:
        slots[:] = [s for s in slots if s not in _DEBIT_ORDER]
    else:
        slots[:] = [s for s in slots if s is not role and s is not LineRole.PAYOUT]


def place(
    subject: Subject, lines: Sequence[StatementLine], taken: Iterable[LineRole]
) -> dict[int, LineRole | str]:
    """The role of each of `lines` (all naming `subject`) — or why it stays unmatched —
    given the roles its matched lines already play. Exact figures are placed first, in
    the order payout, amount, fee; the rest fill what is open in date order."""
    slots = open_slots(subject, taken)
    placed: dict[int, LineRole | str] = {}
    ordered = sorted(lines, key=lambda line: (line.date, line.id))
    debits = [line for line in ordered if line.direction is Direction.DEBIT]
    credits = [line for line in ordered if line.direction is Direction.CREDIT]
    name = f"{subject.kind} {subject.reference}"
    if subject.kind is SubjectKind.COLLECTION:
        for line in debits:
            placed[line.id] = f"a debit cannot be {name}'s money"
        if subject.status is not SubjectStatus.SUCCESSFUL:
            for line in credits:
                placed[line.id] = f"{name} is {subject.status} in the ledger"
            credits = []
        debits = []
    elif subject.status is SubjectStatus.PENDING:
        for line in credits:
            placed[line.id] = f"{name} is still pending: matched once its outcome is known"
        credits = []
    for exact in _DEBIT_ORDER:  # exact figures first
        for line in debits:
            if (
                line.id not in placed
                and exact in slots
                and line.amount == ledger_figure(subject, exact)
            ):
                placed[line.id] = exact
                _close(slots, exact)
    rest = [line for line in debits if line.id not in placed]
    for i, line in enumerate(rest):
        role: LineRole | None
        if LineRole.PAYOUT in slots:  # nothing of the payout yet: two lines left → split
            role = LineRole.PAYOUT_AMOUNT if len(rest) - i >= 2 else LineRole.PAYOUT
        else:
            role = next((s for s in slots if s in _DEBIT_ORDER), None)
        if role is None:
            placed[line.id] = f"duplicate: {name}'s payout is already on the statement"
            continue
        placed[line.id] = role
        _close(slots, role)
    credit = next((s for s in slots if s not in _DEBIT_ORDER), None)
    fitting = [line for line in credits if credit and line.amount == ledger_figure(subject, credit)]
    for line in fitting + [line for line in credits if line not in fitting]:
        if credit is not None:
            placed[line.id] = credit
            credit = None
        else:
            placed[line.id] = f"duplicate: {name}'s credit is already on the statement"
    return placed


def _within(a: dt.date, b: dt.date, window: dt.timedelta) -> bool:
    return abs(a - b) <= window


def match_lines(
    lines: Sequence[StatementLine],
    subjects: Iterable[Subject],
    *,
    window: dt.timedelta = DEFAULT_DATE_WINDOW,
    tokens: Mapping[int, set[str]] | None = None,
) -> Matching:
    """Decide every line of `lines` (see the module's docstring); `tokens` may give lines'
    `reference_tokens` by line id, already cut by the caller.

    `lines` are the lines to consider — unmatched and suggested ones, of any account — and
    the matched lines of the subjects they may belong to (so a movement already on the
    statement is not matched twice); `subjects` are those the lines may name and those of
    their amounts within the window (the shell finds both by index: `reference_tokens` and
    `reference_key` give the keys, and amount and date the rest)."""
    by_ref: dict[SubjectRef, Subject] = {}
    for subject in subjects:
        by_ref.setdefault(subject.ref, subject)
    index = ReferenceIndex(by_ref.values())
    taken: dict[SubjectRef, list[LineRole]] = defaultdict(list)
    outcome: dict[int, Decision] = {}
    mismatches: list[Mismatch] = []
    reversals: list[Reversal] = []

    def decide(line: StatementLine, state: LineState, match: LineMatch | None, why: str) -> None:
        changed = (state, match) != (line.state, line.match)
        outcome[line.id] = Decision(line.id, state, match, why, changed)

    def matched(line: StatementLine, subject: Subject, role: LineRole) -> None:
        figure = ledger_figure(subject, role)
        if line.amount != figure:
            mismatches.append(Mismatch(line.id, subject.ref, role, line.amount, figure))

    # Matched and ignored lines stay as they are; they take their subject's slots.
    open_lines: list[StatementLine] = []
    for line in lines:
        if line.state not in _KEPT:
            open_lines.append(line)
            continue
        decide(line, line.state, line.match, "")
        match = line.match
        if line.state is LineState.MATCHED and match and match.subject and match.role:
            taken[match.subject].append(match.role)
            if match.subject in by_ref:
                matched(line, by_ref[match.subject], match.role)

    # 1. By reference.
    naming: dict[SubjectRef, list[StatementLine]] = defaultdict(list)
    unnamed: list[StatementLine] = []
    for line in open_lines:
        named = (
            index.named_by(line, None if tokens is None else tokens.get(line.id))
            if line.account_kind is AccountKind.WALLET
            else set()
        )
        if len(named) == 1:
            naming[named.pop()].append(line)
        elif named:
            names = ", ".join(sorted(ref.reference for ref in named))
            decide(line, LineState.UNMATCHED, None, f"names more than one subject: {names}")
        else:
            unnamed.append(line)
    for ref in sorted(naming, key=lambda r: (r.kind, r.reference)):
        subject = by_ref[ref]
        placed = place(subject, naming[ref], taken[ref])
        for line in naming[ref]:
            role = placed[line.id]
            if not isinstance(role, LineRole):
                decide(line, LineState.UNMATCHED, None, role)
                continue
            decide(line, LineState.MATCHED, LineMatch(subject=ref, role=role), "")
            matched(line, subject, role)
            taken[ref].append(role)
            if role is LineRole.REVERSAL and subject.status is SubjectStatus.SUCCESSFUL:
                reversals.append(Reversal(line.id, ref, line.date))

    # 2. By amount and date: candidates both ways, then only one-to-one pairs are suggested.
    slots: dict[tuple[Direction, int], list[tuple[SubjectRef, LineRole, dt.date]]]
    slots = defaultdict(list)
    # (Open slots are only ever asked for by an unnamed line: none, none to list.)
    for ref, subject in by_ref.items() if unnamed else ():
        for role in open_slots(subject, taken[ref]):
            if role is LineRole.REVERSAL:
                continue  # a reversal is never guessed from an amount
            figure = ledger_figure(subject, role)
            direction = Direction.DEBIT if role in _DEBIT_ORDER else Direction.CREDIT
            slots[(direction, figure)].append((ref, role, subject.date))
    by_shape: dict[tuple[AccountKind, Direction, int], list[StatementLine]] = defaultdict(list)
    for line in unnamed:
        by_shape[(line.account_kind, line.direction, line.amount)].append(line)
    candidates: dict[int, list[LineMatch]] = {}
    fits: dict[LineMatch, list[int]] = defaultdict(list)
    for line in unnamed:
        found: dict[object, LineMatch] = {}  # one candidate per subject, its first open role
        if line.account_kind is AccountKind.WALLET:
            for ref, role, day in slots[(line.direction, line.amount)]:
                if _within(line.date, day, window):
                    found.setdefault(ref, LineMatch(subject=ref, role=role))
        other_kind = next(kind for kind in AccountKind if kind is not line.account_kind)
        other_direction = next(d for d in Direction if d is not line.direction)
        for other in by_shape[(other_kind, other_direction, line.amount)]:
            if _within(line.date, other.date, window):
                found[other.id] = LineMatch(line=other.id)
        candidates[line.id] = list(found.values())
        for candidate in found.values():
            fits[candidate].append(line.id)
    for line in unnamed:
        mine = candidates[line.id]
        if len(mine) != 1:
            why = f"{len(mine)} candidates of its amount within the window" if mine else ""
            decide(line, LineState.UNMATCHED, None, why or "no candidate")
            continue
        (candidate,) = mine
        if candidate.line is not None:
            mutual = [LineMatch(line=line.id)] == candidates[candidate.line]
        else:
            mutual = fits[candidate] == [line.id]
        if mutual:
            decide(line, LineState.SUGGESTED, candidate, "")
        else:
            decide(line, LineState.UNMATCHED, None, "its only candidate fits another line too")
    return Matching(tuple(outcome[line.id] for line in lines), tuple(mismatches), tuple(reversals))


def hand_role(line: StatementLine, subject: Subject, taken: Iterable[LineRole]) -> LineRole | None:
    """The role a line matched by hand to `subject` plays: the one the matcher would give
    it, else the closest (a payout, or the credit its status calls for); None for a debit
    matched to a collection, which the ledger expects nothing of."""
    role = place(subject, [line], taken)[line.id]
    if isinstance(role, LineRole):
        return role
    if subject.kind is SubjectKind.COLLECTION:
        return LineRole.COLLECTION_CREDIT if line.direction is Direction.CREDIT else None
    if line.direction is Direction.DEBIT:
        return LineRole.PAYOUT
    return LineRole.REFUND if subject.status is not SubjectStatus.SUCCESSFUL else LineRole.REVERSAL


@dataclass(frozen=True, slots=True)
class Coverage:
    """The dates an imported statement of the wallet covers (both ends included)."""

    since: dt.date
    until: dt.date


def missing_from_statement(
    subjects: Iterable[Subject],
    matched: Iterable[StatementLine],
    coverage: Iterable[Coverage],
    *,
    window: dt.timedelta = DEFAULT_DATE_WINDOW,
) -> list[Movement]:
    """The movements of subjects final at the provider that no matched line shows, although
    a statement covers their date and the window after it (`missing_from_statement`).

    `matched` are the wallet lines matched to `subjects`; a movement is missing only when one
    imported statement covers the whole of [its date, its date + window]."""
    roles: dict[SubjectRef, set[LineRole]] = defaultdict(set)
    for line in matched:
        match = line.match
        if line.state is LineState.MATCHED and match and match.subject and match.role:
            roles[match.subject].add(match.role)
    spans = list(coverage)
    missing: list[Movement] = []
    for subject in subjects:
        if not final_at_provider(subject):
            continue
        taken = roles[subject.ref]
        for movement in expected_movements(subject, taken):
            covered = any(
                span.since <= movement.date and movement.date + window <= span.until
                for span in spans
            )
            if movement.role not in taken and covered:
                missing.append(movement)
    return missing
