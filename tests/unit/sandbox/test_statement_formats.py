"""The four statement exports, each read back by independent means and compared with the
journal they came from."""

from __future__ import annotations

from datetime import date

import pytest

from sandbox.config import SandboxConfig
from sandbox.faults import Faults
from sandbox.journal import Direction, Journal, Kind
from sandbox.state import World
from sandbox.statement_formats import naira, render
from tests.support.statement_readers import (
    account_of_camt053,
    gaps,
    read_camt053,
    read_csv,
    read_mt940,
    read_xlsx,
)

START = 120_050


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_780_000_000.0

    def __call__(self) -> float:
        return self.now


def _busy_world(faults: Faults | None = None) -> World:
    """A wallet with payouts, a refund, a reversal, a collection and a funding on two days."""
    clock = Clock()
    config = SandboxConfig(
        webhook_url="http://127.0.0.1:9/hook",
        seed=9,
        complete_after=1.0,
        wallet_balance=START,
        faults=faults or Faults(),
    )
    world = World(config, clock=clock)
    world.fund(1_000_000_000)
    for reference, account, amount in [
        ("pay-1", ("044", "0440000017"), 1_250_050),
        ("pay-2", ("058", "0589999929"), 400_000),
        ("pay-3", ("057", "0570000015"), 7_000_000),
    ]:
        world.initiate_transfer(
            amount=amount, bank_code=account[0], account_number=account[1], reference=reference
        )
    clock.now += 86_400
    world.complete_due(clock.now)
    world.reverse("pay-3", "Recalled", webhook=False)
    world.create_collection(reference="col-1", amount=500_000, customer={}, meta={})
    world.pay_collection("col-1", 500_000)
    return world


READERS = {"csv": read_csv, "xlsx": read_xlsx, "mt940": read_mt940, "camt053": read_camt053}


@pytest.mark.parametrize("fmt", sorted(READERS))
def test_each_format_reads_back_to_the_journal_and_chains(fmt):
    """Every line's day, reference, narration and signed amount come back exactly, and the
    balances chain from the opening to the closing balance."""
    world = _busy_world()
    statement = world.wallet_statement(None, None)
    read = READERS[fmt](render(statement, fmt, created="2026-05-29T00:00:00Z"))
    truth = world.movements()
    assert [(line.day, line.reference, line.signed) for line in read.lines] == [
        (m.day, m.reference, m.signed) for m in truth
    ]
    for line, movement in zip(read.lines, truth, strict=True):
        # MT940's :86: adds the full reference when the narration lacks it.
        expected = movement.narration
        if fmt == "mt940" and movement.reference not in expected:
            expected = f"{expected} / {movement.reference}"
        assert line.narration == expected
    opening = START if read.opening is None else read.opening
    assert opening == START
    assert gaps(opening, read.lines) == []
    assert opening + sum(line.signed for line in read.lines) == world.balance
    if read.closing is not None:
        assert read.closing == world.balance
    if read.lines[0].balance is not None:
        assert [line.balance for line in read.lines] == [m.balance for m in truth]
    kinds = {m.kind for m in truth}
    assert {Kind.PAYOUT, Kind.PAYOUT_FEE, Kind.REFUND, Kind.REVERSAL, Kind.COLLECTION} <= kinds


def test_the_csv_is_exactly_the_agreed_text():
    """Header, ISO dates, quoted naira with thousands separators, an empty other column."""
    journal = Journal("SANDBOX-WALLET", 100_000_000)
    journal.post(
        time=1_780_000_000.0,
        kind=Kind.PAYOUT,
        direction=Direction.DEBIT,
        amount=125_050,
        reference="TRF_D7731322DE471BE7",
        narration="Transfer to 0440000017 Access Bank / order-1",
    )
    statement = journal.statement(None, None, today=date(2026, 5, 28))
    assert render(statement, "csv", created="x").decode() == (
        "Date,Value Date,Reference,Narration,Debit,Credit,Balance\r\n"
        "2026-05-28,2026-05-28,TRF_D7731322DE471BE7,"
        'Transfer to 0440000017 Access Bank / order-1,"1,250.50",,"998,749.50"\r\n'
    )


def test_the_mt940_lines_are_exactly_the_agreed_text():
    """:60F:, one :61: with the truncated and full reference, :86:, :62F:, CRLF endings."""
    journal = Journal("SANDBOX-WALLET", 100_000_000)
    journal.post(
        time=1_780_000_000.0,
        kind=Kind.PAYOUT,
        direction=Direction.DEBIT,
        amount=1_250_000,
        reference="TRF_D7731322DE471BE7",
        narration="Fee:\nTRF_D7731322DE471BE7",
    )
    statement = journal.statement(None, None, today=date(2026, 5, 28))
    assert render(statement, "mt940", created="x").decode().split("\r\n") == [
        ":20:STMT260528260528",
        ":25:SANDBOX-WALLET",
        ":28C:1/1",
        ":60F:C260528NGN1000000,00",
        ":61:2605280528D12500,00NTRFTRF_D7731322DE47//TRF_D7731322DE471BE7",
        ":86:Fee: TRF_D7731322DE471BE7",  # a control character cannot start a new field
        ":62F:C260528NGN987500,00",
        "",
    ]


def test_a_negative_balance_is_written_as_debit_in_every_format():
    """A wallet below zero: `-` in CSV, `D` in MT940, DBIT in CAMT.053."""
    journal = Journal("SANDBOX-WALLET", 100)
    journal.post(
        time=1_780_000_000.0,
        kind=Kind.ADJUSTMENT,
        direction=Direction.DEBIT,
        amount=123_456_789,
        reference="ADJ_1",
        narration="n",
    )
    statement = journal.statement(None, None, today=date(2026, 5, 28))
    assert read_csv(render(statement, "csv", created="x")).lines[0].balance == -123_456_689
    assert read_mt940(render(statement, "mt940", created="x")).closing == -123_456_689
    camt = render(statement, "camt053", created="2026-05-28T00:00:00Z")
    assert read_camt053(camt).closing == -123_456_689
    assert account_of_camt053(camt) == "SANDBOX-WALLET"


@pytest.mark.parametrize(
    ("kobo", "text"),
    [(0, "0.00"), (5, "0.05"), (125_050, "1,250.50"), (-100_000_000, "-1,000,000.00")],
)
def test_naira_text(kobo, text):
    """Kobo are written as naira with two decimals and comma thousands separators."""
    assert naira(kobo) == text


def test_statement_faults_show_in_the_exports():
    """Drop-line leaves a balance gap at the dropped line; the unknown debit and the drifted
    fee are lines whose balances still chain."""
    world = _busy_world(Faults(statement_drop_line=3, statement_unknown_debit=1.0))
    read = read_csv(render(world.wallet_statement(None, None), "csv", created="x"))
    truth = world.movements()
    assert len(read.lines) == len(truth) - 1
    assert gaps(START, read.lines) == [2]  # the third movement is missing: its successor jumps
    outside = {m.reference for m in truth if m.kind is Kind.OUTSIDE_PAYOUT}
    assert outside and outside <= {line.reference for line in read.lines}
