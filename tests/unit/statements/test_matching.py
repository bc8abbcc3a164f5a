"""The pure matcher: every rule of PRODUCT.md "Matching", in its order."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from statements.facts import (
    AccountKind,
    LineMatch,
    LineRole,
    LineState,
    StatementLine,
    Subject,
    SubjectStatus,
)
from statements.matching import (
    Coverage,
    Mismatch,
    Reversal,
    hand_role,
    match_lines,
    missing_from_statement,
)
from statements.tokens import reference_key, reference_tokens
from tests.unit.statements.samples import (
    CREDIT,
    DAY,
    DEBIT,
    collection,
    line,
    matched_to,
    transfer,
)

R = LineRole
T = transfer()  # 500_000 + 2_500 fee, ORD-1001 / PSP-900001
BANK = AccountKind.BANK


def states(result: object) -> list[tuple[int, LineState, LineMatch | None]]:
    return [(d.line, d.state, d.match) for d in result.decisions]  # type: ignore[attr-defined]


def test_provider_reference_in_the_reference_column_matches_a_one_line_payout() -> None:
    """A debit of amount + fee whose reference is the provider's is the payout, exactly."""
    result = match_lines([line(1, 502_500, reference="PSP-900001")], [T])
    assert states(result) == [(1, LineState.MATCHED, matched_to(T, R.PAYOUT))]
    assert result.decisions[0].changed and result.mismatches == () and result.reversals == ()


def test_merchant_reference_inside_the_narration_matches_whatever_its_case() -> None:
    """The merchant's reference found between separators in an upper-cased narration counts."""
    result = match_lines([line(1, 502_500, narration="TRF/ord-1001/J DOE")], [T])
    assert states(result) == [(1, LineState.MATCHED, matched_to(T, R.PAYOUT))]


def test_the_longest_reference_found_wins_and_a_reference_is_never_found_inside_a_longer() -> None:
    """'ORD-1' and 'ORD-1-RETRY' both appear in 'ORD-1-RETRY': the longer names the line."""
    short = transfer("ORD-1", provider_reference=None)
    long = transfer("ORD-1-RETRY", provider_reference=None)
    result = match_lines([line(1, 502_500, narration="pay ORD-1-RETRY")], [short, long])
    assert states(result) == [(1, LineState.MATCHED, matched_to(long, R.PAYOUT))]
    assert "ORD-10" not in reference_tokens("ORD-1001")
    assert reference_key(" -ord-1001. ") == "ORD-1001"


def test_a_line_naming_two_subjects_equally_is_left_unmatched() -> None:
    """Two different references of the same length in one line: a person chooses."""
    other = transfer("ORD-1002", provider_reference=None)
    result = match_lines([line(1, 502_500, narration="ORD-1001 ORD-1002")], [T, other])
    assert states(result) == [(1, LineState.UNMATCHED, None)]
    assert "ORD-1001, ORD-1002" in result.decisions[0].reason


def test_two_lines_amount_then_fee_match_one_payout_whatever_their_order() -> None:
    """The fee line listed first still gets the fee's role and the amount line the amount's."""
    lines = [line(1, 2_500, reference="PSP-900001"), line(2, 500_000, reference="PSP-900001")]
    result = match_lines(lines, [T])
    assert states(result) == [
        (1, LineState.MATCHED, matched_to(T, R.PAYOUT_FEE)),
        (2, LineState.MATCHED, matched_to(T, R.PAYOUT_AMOUNT)),
    ]
    assert result.mismatches == ()


def test_a_fee_line_arriving_after_its_matched_amount_line_fills_the_fee() -> None:
    """A matched amount line (kept) leaves only the fee open for the next import's line."""
    kept = line(1, 500_000, state=LineState.MATCHED, match=matched_to(T, R.PAYOUT_AMOUNT))
    result = match_lines([kept, line(2, 2_500, narration="FEE PSP-900001")], [T])
    assert states(result) == [
        (1, LineState.MATCHED, matched_to(T, R.PAYOUT_AMOUNT)),
        (2, LineState.MATCHED, matched_to(T, R.PAYOUT_FEE)),
    ]
    assert not result.decisions[0].changed


def test_a_credit_of_the_amount_is_a_failed_transfers_refund() -> None:
    """A failed transfer: its payout debit, then its amount back; no reversal."""
    failed = transfer(status=SubjectStatus.FAILED)
    lines = [
        line(1, 502_500, reference="PSP-900001"),
        line(2, 500_000, CREDIT, reference="PSP-900001"),
    ]
    result = match_lines(lines, [failed])
    assert states(result)[1] == (2, LineState.MATCHED, matched_to(failed, R.REFUND))
    assert result.reversals == ()


def test_a_credit_for_a_successful_transfer_is_a_reversal_from_the_statement() -> None:
    """The ledger holds it successful: the credit is its reversal, source `statement`."""
    result = match_lines([line(7, 500_000, CREDIT, narration="REVERSAL PSP-900001")], [T])
    assert states(result) == [(7, LineState.MATCHED, matched_to(T, R.REVERSAL))]
    assert result.reversals == (Reversal(7, T.ref, DAY, "statement"),)
    already = transfer(status=SubjectStatus.REVERSED)
    assert (
        match_lines([line(7, 500_000, CREDIT, reference="PSP-900001")], [already]).reversals == ()
    )


def test_a_collection_is_credited_the_amount_paid_less_the_fee() -> None:
    """A successful collection's credit is amount paid − fee; a short one is a mismatch."""
    paid = collection(amount_paid=800_000)
    exact = match_lines([line(1, 790_000, CREDIT, reference="PSC-700001")], [paid])
    assert states(exact) == [(1, LineState.MATCHED, matched_to(paid, R.COLLECTION_CREDIT))]
    assert exact.mismatches == ()
    short = match_lines([line(1, 780_000, CREDIT, reference="COL-2001")], [paid])
    assert short.mismatches == (Mismatch(1, paid.ref, R.COLLECTION_CREDIT, 780_000, 790_000),)


def test_figures_that_differ_are_matched_all_the_same_with_both_figures() -> None:
    """A drifted fee line and a one-line payout of the wrong total: matched, and mismatched."""
    drift = [line(1, 500_000, reference="PSP-900001"), line(2, 3_000, reference="PSP-900001")]
    result = match_lines(drift, [T])
    assert states(result)[1] == (2, LineState.MATCHED, matched_to(T, R.PAYOUT_FEE))
    assert result.mismatches == (Mismatch(2, T.ref, R.PAYOUT_FEE, 3_000, 2_500),)
    total = match_lines([line(1, 503_000, reference="PSP-900001")], [T])
    assert states(total) == [(1, LineState.MATCHED, matched_to(T, R.PAYOUT))]
    assert total.mismatches == (Mismatch(1, T.ref, R.PAYOUT, 503_000, 502_500),)


def test_a_second_debit_of_a_payout_already_on_the_statement_stays_unmatched() -> None:
    """A payout debited twice: the first line matches, the duplicate is for a person."""
    lines = [line(1, 502_500, reference="PSP-900001"), line(2, 502_500, reference="PSP-900001")]
    result = match_lines(lines, [T])
    assert [d.state for d in result.decisions] == [LineState.MATCHED, LineState.UNMATCHED]
    assert "duplicate" in result.decisions[1].reason


def test_a_credit_naming_a_pending_transfer_waits_for_its_outcome() -> None:
    """Until the ledger knows the outcome a refund and a reversal look alike: unmatched."""
    pending = transfer(status=SubjectStatus.PENDING)
    result = match_lines([line(1, 500_000, CREDIT, reference="PSP-900001")], [pending])
    assert states(result) == [(1, LineState.UNMATCHED, None)]
    assert "pending" in result.decisions[0].reason


def test_an_unreferenced_line_with_one_candidate_is_suggested_never_matched() -> None:
    """Same amount within the window and no other candidate: a suggestion for finance."""
    result = match_lines(
        [line(1, 502_500, narration="NIP OUTWARD", date=DAY + dt.timedelta(1))], [T]
    )
    assert states(result) == [(1, LineState.SUGGESTED, matched_to(T, R.PAYOUT))]
    assert all(d.state is not LineState.MATCHED for d in result.decisions)


def test_two_candidates_of_the_same_amount_leave_the_line_unmatched() -> None:
    """Two transfers of the line's amount in the window: no suggestion."""
    twin = transfer("ORD-1002", provider_reference="PSP-900002")
    result = match_lines([line(1, 502_500)], [T, twin])
    assert states(result) == [(1, LineState.UNMATCHED, None)]
    assert "2 candidates" in result.decisions[0].reason


def test_two_lines_for_one_candidate_are_both_left_unmatched() -> None:
    """A candidate fitting two unreferenced lines is suggested to neither."""
    result = match_lines([line(1, 502_500), line(2, 502_500)], [T])
    assert [d.state for d in result.decisions] == [LineState.UNMATCHED] * 2


def test_the_date_window_includes_its_edges_and_nothing_beyond() -> None:
    """Two days apart is within the default window; three days is not; a wider one takes it."""
    edge = match_lines([line(1, 502_500, date=DAY - dt.timedelta(2))], [T])
    assert edge.decisions[0].state is LineState.SUGGESTED
    beyond = [line(1, 502_500, date=DAY + dt.timedelta(3))]
    assert match_lines(beyond, [T]).decisions[0].state is LineState.UNMATCHED
    wide = match_lines(beyond, [T], window=dt.timedelta(days=3))
    assert wide.decisions[0].state is LineState.SUGGESTED


def test_a_wallet_funding_and_the_bank_debit_that_paid_it_are_suggested_as_a_pair() -> None:
    """Same amount, opposite directions, wallet and bank, within the window: each other's."""
    funding = line(1, 10_000_000, CREDIT, narration="FUNDING")
    paid = line(
        2, 10_000_000, DEBIT, narration="TO PSP WALLET", kind=BANK, date=DAY + dt.timedelta(2)
    )
    result = match_lines([funding, paid], [])
    assert states(result) == [
        (1, LineState.SUGGESTED, LineMatch(line=2)),
        (2, LineState.SUGGESTED, LineMatch(line=1)),
    ]
    late = line(2, 10_000_000, DEBIT, kind=BANK, date=DAY + dt.timedelta(3))
    assert [d.state for d in match_lines([funding, late], []).decisions] == [
        LineState.UNMATCHED
    ] * 2


def test_a_pair_with_a_second_bank_line_of_the_same_amount_is_not_suggested() -> None:
    """The wallet credit fits two bank debits: no pair is suggested."""
    lines = [
        line(1, 10_000_000, CREDIT),
        line(2, 10_000_000, DEBIT, kind=BANK),
        line(3, 10_000_000, DEBIT, kind=BANK),
    ]
    assert all(d.state is LineState.UNMATCHED for d in match_lines(lines, []).decisions)


def test_lines_matched_by_hand_or_ignored_are_never_changed() -> None:
    """A hand match to another subject than the line names, and an ignored line, stay."""
    other = transfer("ORD-1002", provider_reference="PSP-900002")
    by_hand = line(
        1,
        502_500,
        reference="PSP-900001",
        state=LineState.MATCHED,
        match=matched_to(other, R.PAYOUT),
    )
    ignored = line(2, 502_500, reference="PSP-900001", state=LineState.IGNORED)
    result = match_lines([by_hand, ignored], [T, other])
    assert states(result) == [
        (1, LineState.MATCHED, matched_to(other, R.PAYOUT)),
        (2, LineState.IGNORED, None),
    ]
    assert not any(d.changed for d in result.decisions)


def test_a_suggested_line_is_reconsidered_once_its_candidate_is_taken() -> None:
    """The suggested subject has since been matched by reference: the suggestion goes."""
    suggested = line(1, 502_500, state=LineState.SUGGESTED, match=matched_to(T, R.PAYOUT))
    result = match_lines([suggested, line(2, 502_500, reference="PSP-900001")], [T])
    assert states(result) == [
        (1, LineState.UNMATCHED, None),
        (2, LineState.MATCHED, matched_to(T, R.PAYOUT)),
    ]
    assert result.decisions[0].changed


def test_a_bank_line_is_never_matched_by_reference() -> None:
    """Transfers and collections move the wallet: a bank line naming one is not theirs."""
    result = match_lines([line(1, 502_500, reference="PSP-900001", kind=BANK)], [T])
    assert result.decisions[0].state is LineState.UNMATCHED


def test_a_hand_match_gets_the_role_the_matcher_would_give_else_the_closest() -> None:
    """A fee-sized debit is the fee; a debit on a full payout is a payout; a credit a reversal."""
    assert hand_role(line(1, 2_500), T, [R.PAYOUT_AMOUNT]) is R.PAYOUT_FEE
    assert hand_role(line(1, 9), T, [R.PAYOUT]) is R.PAYOUT
    assert hand_role(line(1, 9, CREDIT), T, [R.REVERSAL]) is R.REVERSAL
    assert hand_role(line(1, 9), collection(), []) is None


COVER = [Coverage(DAY - dt.timedelta(10), DAY + dt.timedelta(2))]


def test_a_final_subject_absent_from_a_covering_statement_is_missing() -> None:
    """A successful transfer with no line, covered up to its date + window: its payout."""
    missing = missing_from_statement([T], [], COVER)
    assert [(m.subject, m.role, m.amount, m.date) for m in missing] == [
        (T.ref, R.PAYOUT, 502_500, DAY)
    ]


def test_a_statement_ending_inside_the_window_does_not_yet_call_it_missing() -> None:
    """Covered up to date + window − 1 day: the line may still come."""
    short = [Coverage(DAY - dt.timedelta(10), DAY + dt.timedelta(1))]
    assert missing_from_statement([T], [], short) == []


def test_only_subjects_whose_money_moved_can_be_missing() -> None:
    """Pending transfers, failed ones charged no fee and unpaid collections are not."""
    subjects = [
        transfer(status=SubjectStatus.PENDING),
        transfer(status=SubjectStatus.FAILED, fee=0),
        collection(status=SubjectStatus.PENDING),
    ]
    assert missing_from_statement(subjects, [], COVER) == []


def test_the_part_of_a_subject_not_on_the_statement_is_what_is_missing() -> None:
    """An amount line without its fee; a failed transfer's payout without its refund."""
    amount_only = line(1, 500_000, state=LineState.MATCHED, match=matched_to(T, R.PAYOUT_AMOUNT))
    assert [m.role for m in missing_from_statement([T], [amount_only], COVER)] == [R.PAYOUT_FEE]
    failed = transfer(status=SubjectStatus.FAILED)
    payout = line(2, 502_500, state=LineState.MATCHED, match=matched_to(failed, R.PAYOUT))
    missing = missing_from_statement([failed], [payout], COVER)
    assert [(m.role, m.direction, m.amount) for m in missing] == [(R.REFUND, CREDIT, 500_000)]
    reversed_later = transfer(status=SubjectStatus.REVERSED, reversed_on=DAY + dt.timedelta(1))
    done = line(3, 502_500, state=LineState.MATCHED, match=matched_to(reversed_later, R.PAYOUT))
    assert missing_from_statement([reversed_later], [done], COVER) == []


def test_a_kept_match_is_checked_again_against_the_ledgers_current_figures() -> None:
    """The provider later confirmed another fee: the matched fee line becomes a mismatch."""
    kept = line(1, 2_500, state=LineState.MATCHED, match=matched_to(T, R.PAYOUT_FEE))
    refeed = transfer(fee=3_000)
    result = match_lines([kept], [refeed])
    assert result.mismatches == (Mismatch(1, T.ref, R.PAYOUT_FEE, 2_500, 3_000),)
    assert not result.decisions[0].changed


AMOUNTS = st.sampled_from([2_500, 500_000, 502_500])


@st.composite
def unreferenced(draw: st.DrawFn) -> tuple[list[StatementLine], list[Subject]]:
    facts = [
        transfer(f"ORD-{i}", provider_reference=None, amount=draw(AMOUNTS),
                 fee=draw(st.sampled_from([0, 2_500])),
                 status=draw(st.sampled_from(list(SubjectStatus))),
                 date=DAY + dt.timedelta(draw(st.integers(-3, 3))))
        for i in range(draw(st.integers(0, 4)))
    ]  # fmt: skip
    lines = [
        line(i, draw(AMOUNTS), draw(st.sampled_from([DEBIT, CREDIT])), narration="NIP TRANSFER",
             kind=draw(st.sampled_from(list(AccountKind))),
             date=DAY + dt.timedelta(draw(st.integers(-3, 3))))
        for i in range(draw(st.integers(0, 6)))
    ]  # fmt: skip
    return lines, facts


@settings(max_examples=500, deadline=None)
@given(unreferenced())
def test_lines_naming_nothing_are_never_matched_and_suggestions_are_one_to_one(
    drawn: tuple[list[StatementLine], list[Subject]],
) -> None:
    """Amount and date alone only suggest, each candidate to one line, and pairs both ways."""
    lines, facts = drawn
    decisions = match_lines(lines, facts).decisions
    assert all(d.state in (LineState.SUGGESTED, LineState.UNMATCHED) for d in decisions)
    suggested = {d.line: d.match for d in decisions if d.state is LineState.SUGGESTED}
    to_subjects = [m for m in suggested.values() if m is not None and m.subject is not None]
    assert len(to_subjects) == len(set(to_subjects))
    for id, match in suggested.items():
        assert match is not None
        if match.line is not None:
            assert suggested[match.line] == LineMatch(line=id)
