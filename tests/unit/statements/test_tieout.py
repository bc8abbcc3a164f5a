"""The period tie-out: its arithmetic, its lists, its sentence, and its JSON keys."""

from __future__ import annotations

import dataclasses
import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from statements.facts import (
    IgnoreType,
    LineMatch,
    LineRole,
    LineState,
    StatementLine,
    Subject,
    SubjectKind,
    SubjectStatus,
)
from statements.matching import match_lines
from statements.tieout import TieOut, naira, tie_out
from tests.unit.statements.samples import CREDIT, DEBIT, collection, line, matched_to, transfer

R = LineRole
SINCE, UNTIL = dt.date(2026, 3, 1), dt.date(2026, 3, 31)
KEYS = {
    "account", "since", "until", "opening_balance", "closing_balance", "credits", "debits",
    "statement_movement", "ledger_movement", "residual", "matched", "suggested",
    "unmatched_lines", "missing_from_statement", "mismatches", "balance_gaps", "tied_out",
}  # fmt: skip


def chained(opening: int, lines: list[StatementLine]) -> tuple[list[StatementLine], int]:
    """The lines with running balances from `opening`, and the closing balance."""
    out, balance = [], opening
    for item in lines:
        balance += item.signed_amount
        out.append(dataclasses.replace(item, balance=balance))
    return out, balance


def close(lines: list[StatementLine], subjects: list[Subject], opening: int = 0) -> TieOut:
    stated, closing = chained(opening, lines)
    return tie_out(
        account="provider-wallet",
        since=SINCE,
        until=UNTIL,
        opening_balance=opening,
        closing_balance=closing,
        lines=stated,
        subjects=subjects,
    )


def matched(
    id: int, amount: int, direction: object, subject: Subject, role: LineRole
) -> StatementLine:
    return line(id, amount, direction, state=LineState.MATCHED, match=matched_to(subject, role))  # type: ignore[arg-type]


def test_a_fully_matched_period_ties_out_with_exactly_the_contracts_keys() -> None:
    """Payout, failed transfer, reversal, collection and an ignored funding: residual 0."""
    paid, failed = transfer(), transfer("ORD-2", status=SubjectStatus.FAILED)
    back, cash = transfer("ORD-3", status=SubjectStatus.REVERSED), collection()
    lines = [
        line(1, 5_000_000, CREDIT, state=LineState.IGNORED, ignored_as=IgnoreType.FUNDING),
        matched(2, 502_500, DEBIT, paid, R.PAYOUT),
        matched(3, 500_000, DEBIT, failed, R.PAYOUT_AMOUNT),
        matched(4, 2_500, DEBIT, failed, R.PAYOUT_FEE),
        matched(5, 500_000, CREDIT, failed, R.REFUND),
        matched(6, 502_500, DEBIT, back, R.PAYOUT),
        matched(7, 500_000, CREDIT, back, R.REVERSAL),
        matched(8, 990_000, CREDIT, cash, R.COLLECTION_CREDIT),
    ]
    result = close(lines, [paid, failed, back, cash], opening=1_000)
    body = result.to_json()
    assert set(body) == KEYS
    # + funding − (a+f) − f − f + collection net
    assert body["ledger_movement"] == 5_000_000 - 502_500 - 2_500 - 2_500 + 990_000
    assert body["residual"] == 0 and body["tied_out"] is True
    assert body["matched"] == {"count": 7, "amount": 3_497_500}
    assert body["credits"] - body["debits"] == body["statement_movement"]
    assert result.summary() == "The period ties out to the kobo."


def test_an_unmatched_line_is_the_residual_and_the_one_item_explaining_it() -> None:
    """A debit nobody explains: residual −₦1,250.50, explained by 1 item."""
    result = close([line(1, 125_050, DEBIT, narration="POS CHARGE")], [])
    assert result.residual == -125_050 and not result.tied_out
    assert result.to_json()["unmatched_lines"][0]["id"] == 1  # type: ignore[index]
    assert (
        result.summary() == "The period does not tie out: residual -₦1,250.50, explained by 1 item."
    )
    assert [(e.kind, e.amount) for e in result.explanations()] == [("unmatched_line", -125_050)]


def test_a_movement_missing_from_the_statement_is_listed_and_explains_the_residual() -> None:
    """A successful payout without its line: the ledger moved money the statement did not."""
    result = close([], [transfer()])
    assert result.residual == 502_500 and not result.tied_out
    assert [(m.role, m.amount) for m in result.missing_from_statement] == [(R.PAYOUT, 502_500)]
    assert sum(e.amount for e in result.explanations()) == result.residual


def test_a_suggestion_keeps_the_period_open_even_at_residual_zero() -> None:
    """A line only suggested is not matched: the period does not tie out yet."""
    suggested = line(1, 502_500, state=LineState.SUGGESTED, match=matched_to(transfer(), R.PAYOUT))
    result = close([suggested], [])
    assert result.to_json()["suggested"] == {"count": 1, "amount": 502_500}
    assert not result.tied_out


def test_a_break_in_the_running_balance_is_a_balance_gap() -> None:
    """The second line's balance is ₦10 lower than the first's minus its amount."""
    lines = [
        line(1, 100, CREDIT, state=LineState.IGNORED, balance=100),
        line(2, 100, CREDIT, state=LineState.IGNORED, balance=190),
    ]
    result = tie_out(
        account="provider-wallet", since=SINCE, until=UNTIL, opening_balance=0,
        closing_balance=190, lines=lines, subjects=[],
    )  # fmt: skip
    gaps = result.to_json()["balance_gaps"]
    assert gaps == [
        {
            "after_line": 1,
            "line": 2,
            "expected_balance": 200,
            "stated_balance": 190,
            "difference": -10,
        }
    ]
    assert result.residual == -10 and not result.tied_out


def test_a_pending_payouts_debit_is_its_movement_not_a_mismatch() -> None:
    """The provider debits a payout when it takes it: a pending payout's matched debit is
    what the ledger says moved, so it explains nothing and the period ties out."""
    pending = transfer(status=SubjectStatus.PENDING)
    result = close([matched(1, 502_500, DEBIT, pending, R.PAYOUT)], [pending])
    assert result.mismatches == () and result.missing_from_statement == ()
    assert result.ledger_movement == -502_500 and result.residual == 0


def test_a_pending_payout_with_no_debit_yet_is_not_missing() -> None:
    """Nothing is expected of a pending payout until its debit shows."""
    pending = transfer(status=SubjectStatus.PENDING)
    result = close([], [pending])
    assert result.missing_from_statement == () and result.ledger_movement == 0


def test_a_movement_counts_in_the_period_its_line_falls_in() -> None:
    """A payout of 31 March debited on 1 April belongs to April, not March."""
    late = transfer(date=UNTIL)
    debit = matched(1, 502_500, DEBIT, late, R.PAYOUT)
    debit = dataclasses.replace(debit, date=UNTIL + dt.timedelta(1))
    march = tie_out(
        account="provider-wallet", since=SINCE, until=UNTIL, opening_balance=0,
        closing_balance=0, lines=[debit], subjects=[late],
    )  # fmt: skip
    assert march.tied_out and march.ledger_movement == 0


def test_naira_is_exact_with_separators_and_sign() -> None:
    """Kobo render as naira to the kobo."""
    assert naira(123_456_789) == "₦1,234,567.89" and naira(-5) == "-₦0.05" and naira(0) == "₦0.00"


# -- hypothesis: the arithmetic against an independent computation ------------------------

AMOUNTS = st.sampled_from([1, 2_500, 100_000, 102_500, 500_000])
FEES = st.sampled_from([0, 1_000, 2_500])
DATES = st.dates(SINCE, UNTIL)


@st.composite
def subjects(draw: st.DrawFn) -> list[Subject]:
    out = []
    for i in range(draw(st.integers(0, 6))):
        date = draw(DATES)
        if draw(st.booleans()):
            status = draw(st.sampled_from(list(SubjectStatus)))
            reversed_on = draw(st.dates(date, UNTIL)) if status is SubjectStatus.REVERSED else None
            psp = draw(st.sampled_from([None, f"PSP{i:06d}"]))
            out.append(
                transfer(f"ORD-{i}", provider_reference=psp, amount=draw(AMOUNTS),
                         fee=draw(FEES), status=status, date=date,
                         reversed_on=reversed_on)
            )  # fmt: skip
        else:
            status = draw(st.sampled_from([SubjectStatus.PENDING, SubjectStatus.SUCCESSFUL]))
            out.append(
                collection(f"COL-{i}", provider_reference=None, amount=draw(AMOUNTS),
                           amount_paid=draw(st.none() | AMOUNTS), fee=draw(FEES),
                           status=status, date=date)
            )  # fmt: skip
    return out


@st.composite
def ledgers_and_statements(draw: st.DrawFn) -> tuple[list[Subject], list[StatementLine], int, int]:
    facts = draw(subjects())
    lines = []
    for i in range(draw(st.integers(0, 10))):
        state = draw(st.sampled_from(list(LineState)))
        match, ignored_as = None, None
        if state in (LineState.MATCHED, LineState.SUGGESTED):
            choice = draw(st.integers(0, len(facts) + 1))
            if choice < len(facts):
                match = matched_to(facts[choice], draw(st.sampled_from(list(LineRole))))
            elif choice == len(facts):
                match = LineMatch(line=1_000 + i)
        elif state is LineState.IGNORED:
            ignored_as = draw(st.sampled_from(list(IgnoreType)))
        lines.append(
            line(i, draw(AMOUNTS), draw(st.sampled_from([DEBIT, CREDIT])), date=draw(DATES),
                 state=state, match=match, ignored_as=ignored_as,
                 balance=draw(st.none() | st.integers(-10**7, 10**7)))
        )  # fmt: skip
    opening, closing = draw(st.integers(-(10**7), 10**7)), draw(st.integers(-(10**7), 10**7))
    return facts, lines, opening, closing


def payout_shown(s: Subject, lines: list[StatementLine]) -> bool:
    """A line is matched to the subject as its payout, its amount or its fee."""
    return any(
        item.state is LineState.MATCHED
        and item.match is not None
        and item.match.subject == s.ref
        and item.match.role in (R.PAYOUT, R.PAYOUT_AMOUNT, R.PAYOUT_FEE)
        for item in lines
    )


def oracle_ledger_movement(facts: list[Subject], lines: list[StatementLine]) -> int:
    """The contract's formula, written out: every subject and line is dated in the period."""
    total = 0
    for s in facts:
        if s.kind is SubjectKind.COLLECTION:
            net = (s.amount if s.amount_paid is None else s.amount_paid) - s.fee
            total += net if s.status is SubjectStatus.SUCCESSFUL and net > 0 else 0
        elif s.status is SubjectStatus.SUCCESSFUL:
            total -= s.amount + s.fee
        elif s.status in (SubjectStatus.FAILED, SubjectStatus.REVERSED):
            total -= s.fee  # the amount went out and came back
        elif payout_shown(s, lines):
            total -= s.amount + s.fee  # a pending payout the provider has debited already
    for item in lines:
        pair = item.state is LineState.MATCHED and item.match and item.match.subject is None
        if item.state is LineState.IGNORED or (pair and item.match.line is not None):  # type: ignore[union-attr]
            total += item.signed_amount
    return total


def oracle_nothing_missing(facts: list[Subject], lines: list[StatementLine]) -> bool:
    """Every movement the contract expects has a line playing its role."""
    for s in facts:
        roles = {
            item.match.role
            for item in lines
            if item.state is LineState.MATCHED and item.match and item.match.subject == s.ref
        }
        if s.kind is SubjectKind.COLLECTION:
            net = (s.amount if s.amount_paid is None else s.amount_paid) - s.fee
            needs_credit = s.status is SubjectStatus.SUCCESSFUL and net > 0
            if needs_credit and R.COLLECTION_CREDIT not in roles:
                return False
            continue
        if (s.status is SubjectStatus.PENDING and not payout_shown(s, lines)) or (
            s.status is SubjectStatus.FAILED and s.fee == 0 and not roles
        ):
            continue
        payout = R.PAYOUT in roles or (
            R.PAYOUT_AMOUNT in roles and (R.PAYOUT_FEE in roles or s.fee == 0)
        )
        back = {SubjectStatus.FAILED: R.REFUND, SubjectStatus.REVERSED: R.REVERSAL}.get(s.status)
        if not payout or (back is not None and back not in roles):
            return False
    return True


@settings(max_examples=300, deadline=None)
@given(ledgers_and_statements())
def test_the_tie_out_agrees_with_an_independent_computation(
    drawn: tuple[list[Subject], list[StatementLine], int, int],
) -> None:
    """Figures, residual, its explanation and `tied_out` follow from the contract's formulas."""
    facts, lines, opening, closing = drawn
    result = tie_out(
        account="provider-wallet", since=SINCE, until=UNTIL, opening_balance=opening,
        closing_balance=closing, lines=lines, subjects=facts,
    )  # fmt: skip
    credits = sum(item.amount for item in lines if item.direction is CREDIT)
    debits = sum(item.amount for item in lines if item.direction is DEBIT)
    ledger = oracle_ledger_movement(facts, lines)
    residual = closing - opening - ledger
    body = result.to_json()
    assert (body["credits"], body["debits"]) == (credits, debits)
    assert body["statement_movement"] == closing - opening
    assert (body["ledger_movement"], body["residual"]) == (ledger, residual)
    assert sum(item.amount for item in result.explanations()) == residual
    assert sum(gap.difference for gap in result.balance_gaps) == closing - opening - (
        credits - debits
    )
    open_lines = [
        item
        for item in lines
        if item.state in (LineState.UNMATCHED, LineState.SUGGESTED)
        or (item.state is LineState.MATCHED and (item.match is None or item.match == LineMatch()))
    ]
    nothing_missing = oracle_nothing_missing(facts, lines)
    assert (not result.missing_from_statement) == nothing_missing
    assert body["tied_out"] == (residual == 0 and not open_lines and nothing_missing)


@st.composite
def exact_statements(draw: st.DrawFn) -> tuple[list[Subject], list[StatementLine], int]:
    """A random ledger and the wallet statement that shows every movement it made, as the
    provider exports it (payout in one or two lines, refunds, reversals, collections net of
    fee, fundings), in date order with running balances."""
    facts = [s for s in draw(subjects()) if s.status is not SubjectStatus.PENDING]
    movements: list[tuple[dt.date, int, int, object, str, str]] = []  # date, order, amount, …
    for s in facts:
        names = [s.reference] + ([s.provider_reference] if s.provider_reference else [])
        ref = draw(st.sampled_from(names))
        narration = draw(st.sampled_from([f"TRF/{ref}/x", f"pay {ref.lower()}", ""]))
        reference = "" if narration else ref
        if s.kind is SubjectKind.COLLECTION:
            net = (s.amount if s.amount_paid is None else s.amount_paid) - s.fee
            if s.status is SubjectStatus.SUCCESSFUL and net > 0:
                movements.append((s.date, 0, net, CREDIT, reference, narration))
            continue
        if s.fee and draw(st.booleans()):
            movements.append((s.date, 0, s.amount, DEBIT, reference, narration))
            movements.append((s.date, 1, s.fee, DEBIT, reference, narration))
        else:
            movements.append((s.date, 0, s.amount + s.fee, DEBIT, reference, narration))
        if s.status is SubjectStatus.FAILED:
            movements.append((s.date, 2, s.amount, CREDIT, reference, narration))
        elif s.status is SubjectStatus.REVERSED:
            movements.append((s.reversed_on or s.date, 2, s.amount, CREDIT, reference, narration))
    for _ in range(draw(st.integers(0, 3))):
        movements.append((draw(DATES), 0, draw(AMOUNTS), CREDIT, "", "WALLET FUNDING"))
    movements.sort(key=lambda m: (m[0], m[1]))
    raw = [
        line(i, amount, direction, reference=ref, narration=narr, date=day)  # type: ignore[arg-type]
        for i, (day, _, amount, direction, ref, narr) in enumerate(movements)
    ]
    opening = draw(st.integers(0, 10**8))
    stated, _ = chained(opening, raw)
    return facts, stated, opening


def matched_and_worked(facts: list[Subject], lines: list[StatementLine]) -> list[StatementLine]:
    """The matcher's decisions applied; finance ignores the fundings as `funding`."""
    out = []
    for item, decision in zip(lines, match_lines(lines, facts).decisions, strict=True):
        item = dataclasses.replace(item, state=decision.state, match=decision.match)
        if item.narration == "WALLET FUNDING" and item.state is not LineState.MATCHED:
            item = dataclasses.replace(
                item, state=LineState.IGNORED, match=None, ignored_as=IgnoreType.FUNDING
            )
        out.append(item)
    return out


def statement_tie_out(
    facts: list[Subject], lines: list[StatementLine], opening: int, closing: int
) -> TieOut:
    return tie_out(
        account="provider-wallet", since=SINCE, until=UNTIL, opening_balance=opening,
        closing_balance=closing, lines=matched_and_worked(facts, lines), subjects=facts,
    )  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(exact_statements())
def test_a_statement_showing_every_movement_of_the_ledger_ties_out(
    drawn: tuple[list[Subject], list[StatementLine], int],
) -> None:
    """Matched by the matcher, with its fundings ignored, the exact statement ties out."""
    facts, lines, opening = drawn
    closing = lines[-1].balance if lines else opening
    result = statement_tie_out(facts, lines, opening, closing)  # type: ignore[arg-type]
    assert result.residual == 0 and result.mismatches == () and result.tied_out, (
        result.explanations()
    )
    assert result.summary() == "The period ties out to the kobo."


@settings(max_examples=300, deadline=None)
@given(exact_statements(), st.data())
def test_a_line_removed_from_the_export_is_seen_and_listed(
    drawn: tuple[list[Subject], list[StatementLine], int], data: st.DataObject
) -> None:
    """Without one of its lines the period does not tie out: the balance breaks by the line's
    amount, and a subject's removed movement is listed as missing from the statement."""
    facts, lines, opening = drawn
    if not lines:
        return
    closing = lines[-1].balance
    index = data.draw(st.integers(0, len(lines) - 1))
    removed = lines[index]
    before = {d.line: d for d in match_lines(lines, facts).decisions}[removed.id]
    result = statement_tie_out(facts, lines[:index] + lines[index + 1 :], opening, closing)  # type: ignore[arg-type]
    assert not result.tied_out
    assert removed.signed_amount in [gap.difference for gap in result.balance_gaps]
    if before.match is not None and before.match.subject is not None:
        assert (before.match.subject, removed.direction, removed.amount) in [
            (m.subject, m.direction, m.amount) for m in result.missing_from_statement
        ]
