"""The wallet journal: every movement recorded, adding up to the balance; statements sliced
from it by Lagos day; funding; the three statement faults."""

from __future__ import annotations

from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.config import SandboxConfig
from sandbox.errors import ApiError
from sandbox.faults import FEE_DRIFT_DELTA, STATEMENT_FEE_DRIFT_DELTA, Faults
from sandbox.journal import BANK_OPENING_BALANCE, Direction, Journal, Kind, lagos_day
from sandbox.models import Status
from sandbox.state import World

ACCOUNTS = [("044", "0440000017"), ("058", "0589999929"), ("058", "0589999936")]
START = 50_000_000
# 2026-05-28 22:30 UTC is 23:30 in Lagos: one more hour and the Lagos day changes.
EVENING = 1_780_007_400.0


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = EVENING) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _world(faults: Faults | None = None, clock: Clock | None = None) -> tuple[World, Clock]:
    clock = clock or Clock()
    config = SandboxConfig(
        webhook_url="http://127.0.0.1:9/hook",
        seed=4,
        complete_after=1.0,
        wallet_balance=START,
        faults=faults or Faults(),
    )
    return World(config, clock=clock), clock


def _pay(world: World, reference: str, amount: int = 100_000) -> None:
    world.initiate_transfer(
        amount=amount, bank_code="044", account_number="0440000017", reference=reference
    )


def _chains(world: World) -> None:
    balance = START
    for movement in world.movements():
        assert movement.amount > 0
        balance += movement.signed
        assert movement.balance == balance
    assert balance == world.balance


operations = st.lists(
    st.one_of(
        st.tuples(st.just("initiate"), st.integers(1, 6_000_000), st.sampled_from(ACCOUNTS)),
        st.tuples(st.just("tick"), st.floats(0.0, 4.0)),
        st.tuples(st.just("force"), st.booleans()),
        st.tuples(st.just("reverse"), st.integers(0, 50)),
        st.tuples(st.just("collect"), st.integers(1, 300_000), st.integers(0, 400_000)),
        st.tuples(st.just("fund"), st.integers(1, 10**9)),
        st.tuples(st.just("set_balance"), st.integers(0, 10**8)),
    ),
    max_size=40,
)
fault_sets = st.builds(
    Faults,
    fee_drift=st.sampled_from([0.0, 0.5, 1.0]),
    fail_rate=st.sampled_from([0.0, 0.5]),
    stuck_pending=st.sampled_from([0.0, 0.3]),
    reverse_after_success=st.sampled_from([0.0, 0.5, 1.0]),
    reverse_after_seconds=st.sampled_from([0.0, 2.0]),
    statement_fee_drift=st.sampled_from([0.0, 0.5]),
    statement_unknown_debit=st.sampled_from([0.0, 0.5]),
)


@settings(max_examples=150, deadline=None)
@given(faults=fault_sets, ops=operations)
def test_movements_add_up_to_the_balance_after_any_workload(faults, ops):
    """After any mix of payouts, completions, reversals, collections, fundings and balance
    sets, each movement's balance chains and the movements sum to balance − start."""
    world, clock = _world(faults)
    for number, op in enumerate(ops):
        try:
            if op[0] == "initiate":
                _, amount, (bank, account) = op
                world.initiate_transfer(
                    amount=amount, bank_code=bank, account_number=account, reference=f"t{number}"
                )
            elif op[0] == "tick":
                clock.now += op[1]
                world.complete_due(clock.now)
            elif op[0] == "force":
                pending = [t for t in world.transfers() if t["status"] == "pending"]
                if pending:
                    status = Status.SUCCESSFUL if op[1] else Status.FAILED
                    world.force_complete(pending[0]["reference"], status, None)
            elif op[0] == "reverse":
                done = [t for t in world.transfers() if t["status"] == "successful"]
                if done:
                    world.reverse(done[op[1] % len(done)]["reference"], "back", webhook=True)
            elif op[0] == "collect":
                _, expected, paid = op
                world.create_collection(
                    reference=f"c{number}", amount=expected, customer={}, meta={}
                )
                if paid:
                    world.pay_collection(f"c{number}", paid)
            elif op[0] == "fund":
                world.fund(op[1])
            else:
                world.set_balance(op[1])
        except ApiError:
            pass  # a refusal (insufficient funds, a conflict) moves nothing
        _chains(world)
    assert sum(m.signed for m in world.movements()) == world.balance - START


def test_a_payout_is_two_debits_then_a_refund_on_failure_with_the_agreed_narrations():
    """Initiation debits the amount then the fee; a failure credits the amount back."""
    world, clock = _world()
    world.initiate_transfer(
        amount=250_000, bank_code="058", account_number="0589999929", reference="dorm"
    )
    clock.now += 1.0
    world.complete_due(clock.now)
    reference = world.transaction("dorm")["reference"]
    lines = [(m.kind, m.direction, m.amount, m.reference, m.narration) for m in world.movements()]
    assert lines == [
        (
            Kind.PAYOUT,
            Direction.DEBIT,
            250_000,
            reference,
            "Transfer to 0589999929 Guaranty Trust Bank / dorm",
        ),
        (Kind.PAYOUT_FEE, Direction.DEBIT, 1_000, reference, f"Fee: {reference}"),
        (Kind.REFUND, Direction.CREDIT, 250_000, reference, f"Refund: {reference} / dorm"),
    ]


def test_a_collection_credits_the_amount_paid_less_its_fee_and_an_underpayment_nothing():
    """A paid collection is one credit of paid − fee; an underpaid one moves nothing."""
    world, _ = _world()
    world.create_collection(reference="col", amount=100_000, customer={}, meta={})
    world.create_collection(reference="short", amount=100_000, customer={}, meta={})
    world.pay_collection("col", 120_000)
    world.pay_collection("short", 99_999)
    (line,) = world.movements()
    provider = world.transaction("col")["reference"]
    assert (line.kind, line.direction, line.amount) == (Kind.COLLECTION, Direction.CREDIT, 118_800)
    assert (line.reference, line.narration) == (provider, f"Collection: {provider} / col")


def test_funding_credits_the_wallet_and_debits_the_bank_under_one_reference():
    """A funding is a wallet credit and a bank debit of the same amount and FND_ reference."""
    world, _ = _world()
    movement = world.fund(5_000_000)
    assert movement.reference.startswith("FND_") and len(movement.reference) == 20
    assert movement.reference[4:] == movement.reference[4:].upper()
    assert movement.narration == "Funding from bank account 0123456789"
    assert world.balance == START + 5_000_000
    bank = world.bank_statement(None, None)
    (line,) = bank.lines
    assert (line.direction, line.amount, line.reference) == (
        Direction.DEBIT,
        5_000_000,
        movement.reference,
    )
    assert line.narration == "Transfer to provider wallet"
    assert (bank.opening_balance, bank.closing_balance) == (
        BANK_OPENING_BALANCE,
        BANK_OPENING_BALANCE - 5_000_000,
    )
    assert world.fund(1).reference != movement.reference


def test_a_statement_is_sliced_by_lagos_day_with_true_opening_and_closing():
    """Since/until select Lagos days (23:30 UTC+1 and 00:30 the next day differ), and the
    opening is the balance before the first selected day."""
    world, clock = _world()
    _pay(world, "day1")  # 23:30 Lagos on 2026-05-28
    clock.now += 2 * 3600  # 01:30 Lagos on 2026-05-29, still 2026-05-29 00:30 UTC
    _pay(world, "day2")
    assert lagos_day(clock.now) == date(2026, 5, 29)
    day1 = world.wallet_statement(date(2026, 5, 28), date(2026, 5, 28))
    day2 = world.wallet_statement(date(2026, 5, 29), None)
    everything = world.wallet_statement(None, None)
    assert [m.day for m in day1.lines] == [date(2026, 5, 28)] * 2
    assert (day1.opening_balance, day1.closing_balance) == (START, START - 101_000)
    assert (day2.opening_balance, day2.closing_balance) == (START - 101_000, world.balance)
    assert len(day2.lines) == 2 and len(everything.lines) == 4
    assert (everything.first_day, everything.last_day) == (date(2026, 5, 28), date(2026, 5, 29))
    empty = world.wallet_statement(date(2026, 6, 1), date(2026, 6, 2))
    assert empty.lines == () and empty.opening_balance == empty.closing_balance == world.balance


def test_statement_drop_line_leaves_out_that_movement_and_keeps_true_balances():
    """With statement_drop_line=2 the second movement is missing; the others keep their
    real balances, so the chain shows a gap exactly there."""
    world, _ = _world(Faults(statement_drop_line=2))
    _pay(world, "a")
    _pay(world, "b")
    truth = world.movements()
    statement = world.wallet_statement(None, None)
    assert [m.sequence for m in statement.lines] == [1, 3, 4]
    assert [m.balance for m in statement.lines] == [
        truth[0].balance,
        *[m.balance for m in truth[2:]],
    ]
    assert statement.closing_balance == world.balance
    assert statement.lines[1].balance != statement.lines[0].balance - statement.lines[1].amount


def test_statement_fee_drift_moves_the_wallet_by_a_fee_the_lookup_never_answers():
    """The fee line (and the wallet) are 500 kobo above the fee the lookup answers."""
    world, clock = _world(Faults(statement_fee_drift=1.0))
    _pay(world, "drift")
    clock.now += 1.0
    world.complete_due(clock.now)
    fee_line = world.movements()[1]
    assert fee_line.kind is Kind.PAYOUT_FEE
    assert fee_line.amount == world.transaction("drift")["fee"] + STATEMENT_FEE_DRIFT_DELTA
    assert world.balance == START - 100_000 - fee_line.amount


def test_fee_drift_shows_the_drifted_fee_on_the_fee_line_as_the_lookup_does():
    """With the provider's fee_drift the fee line is the fee charged, which the lookup
    answers after completion."""
    world, clock = _world(Faults(fee_drift=1.0))
    _pay(world, "fd")
    clock.now += 1.0
    world.complete_due(clock.now)
    assert world.movements()[1].amount == world.transaction("fd")["fee"]
    assert world.transaction("fd")["fee"] == 1_000 + FEE_DRIFT_DELTA


def test_statement_unknown_debit_is_a_real_payout_under_a_reference_no_lookup_knows():
    """The outside payout's two debits carry a TRF_ reference that no lookup finds, and
    the wallet really lost them."""
    world, _ = _world(Faults(statement_unknown_debit=1.0))
    _pay(world, "mine")
    mine, _mine_fee, outside, outside_fee = world.movements()
    assert (outside.kind, outside_fee.kind) == (Kind.OUTSIDE_PAYOUT, Kind.OUTSIDE_PAYOUT_FEE)
    assert outside.reference == outside_fee.reference != mine.reference
    assert outside.reference.startswith("TRF_") and len(outside.reference) == 20
    assert outside_fee.narration == f"Fee: {outside.reference}"
    assert "DASHBOARD-mine" in outside.narration
    assert world.balance == START - 101_000 - outside.amount - outside_fee.amount
    try:
        world.transaction(outside.reference)
    except ApiError as exc:
        assert exc.status_code == 404
    else:
        raise AssertionError("the outside payout must be unknown to lookups")


def test_setting_the_balance_is_journalled_as_an_adjustment():
    """POST /_sandbox/wallet's new balance appears as one ADJ_ movement of the difference."""
    world, _ = _world()
    world.set_balance(START - 7)
    world.set_balance(START - 7)  # no change, no line
    (line,) = world.movements()
    assert (line.kind, line.direction, line.amount) == (Kind.ADJUSTMENT, Direction.DEBIT, 7)
    assert line.reference.startswith("ADJ_")


def test_a_journal_posting_of_zero_is_no_line_and_a_negative_one_flips():
    """Zero moves nothing; a negative credit is recorded as a debit."""
    journal = Journal("X", 100)
    assert (
        journal.post(
            time=0.0,
            kind=Kind.FUNDING,
            direction=Direction.CREDIT,
            amount=0,
            reference="r",
            narration="n",
        )
        is None
    )
    line = journal.post(
        time=0.0,
        kind=Kind.COLLECTION,
        direction=Direction.CREDIT,
        amount=-5,
        reference="r",
        narration="n",
    )
    assert line is not None and (line.direction, line.amount, line.balance) == (
        Direction.DEBIT,
        5,
        95,
    )
