"""Over real HTTP: the reverse route and fault, funding, and the statement exports."""

from __future__ import annotations

import pytest

from tests.integration.sandbox.conftest import PENDING_ACCOUNT, transfer_body, wait_until
from tests.support.statement_readers import (
    account_of_camt053,
    gaps,
    read_camt053,
    read_csv,
    read_mt940,
    read_xlsx,
)


def _succeeded(box, receiver, reference, amount=100_000):
    with box.client() as client:
        client.post("/v1/transfer/initiate", json=transfer_body(reference, amount=amount))
    wait_until(lambda: any(b["data"]["merchant_reference"] == reference for b in receiver.bodies()))
    with box.client() as client:
        return client.get(f"/v1/transaction/{reference}").json()["data"]


def _lookup(box, reference):
    with box.client() as client:
        return client.get(f"/v1/transaction/{reference}").json()["data"]


def test_reverse_route_fails_the_lookup_credits_the_wallet_and_sends_the_webhook(sandbox, receiver):
    """A reversal with `webhook: true` answers the transfer's truth, the lookup says failed
    with the reason, the wallet regains the amount and a transfer.failed webhook arrives."""
    done = _succeeded(sandbox, receiver, "rv-1")
    balance = sandbox.world.balance
    with sandbox.control() as control:
        response = control.post(
            f"/_sandbox/transfers/{done['reference']}/reverse",
            json={"reason": "Recalled by beneficiary bank", "webhook": True},
        )
    assert response.status_code == 200
    assert response.json()["status"] == "failed" and response.json()["reversed_at"]
    lookup = _lookup(sandbox, "rv-1")
    assert (lookup["status"], lookup["failure_reason"], lookup["fee"]) == (
        "failed",
        "Recalled by beneficiary bank",
        done["fee"],
    )
    assert sandbox.world.balance == balance + 100_000
    failed = wait_until(lambda: [b for b in receiver.bodies() if b["event"] == "transfer.failed"])
    assert failed == [
        {
            "event": "transfer.failed",
            "data": {
                "reference": done["reference"],
                "merchant_reference": "rv-1",
                "status": "failed",
                "failure_reason": "Recalled by beneficiary bank",
            },
        }
    ]


def test_reverse_route_without_webhook_sends_none(sandbox, receiver):
    """With `webhook: false` (and the merchant reference in the path) no webhook is sent:
    a later transfer's webhook arrives and still no transfer.failed came before or after."""
    _succeeded(sandbox, receiver, "rv-2")
    with sandbox.control() as control:
        response = control.post(
            "/_sandbox/transfers/rv-2/reverse", json={"reason": "x", "webhook": False}
        )
    assert response.status_code == 200
    assert _lookup(sandbox, "rv-2")["status"] == "failed"
    _succeeded(sandbox, receiver, "rv-2-later")  # submitted after any reversal webhook
    assert [b["event"] for b in receiver.bodies()] == ["transfer.success", "transfer.success"]


def test_reverse_route_answers_404_409_and_422(sandbox, receiver):
    """Unknown 404; pending or already reversed 409; a bad body 422 naming the fields."""
    with sandbox.client() as client:
        client.post("/v1/transfer/initiate", json=transfer_body("rv-slow", account=PENDING_ACCOUNT))
    _succeeded(sandbox, receiver, "rv-3")
    good = {"reason": "r", "webhook": False}
    with sandbox.control() as control:
        unknown = control.post("/_sandbox/transfers/nope/reverse", json=good)
        pending = control.post("/_sandbox/transfers/rv-slow/reverse", json=good)
        assert control.post("/_sandbox/transfers/rv-3/reverse", json=good).status_code == 200
        again = control.post("/_sandbox/transfers/rv-3/reverse", json=good)
        bad = control.post("/_sandbox/transfers/rv-3/reverse", json={"reason": "", "webhook": 1})
        not_json = control.post("/_sandbox/transfers/rv-3/reverse", content=b"{")
    assert unknown.status_code == 404
    assert (pending.status_code, again.status_code) == (409, 409)
    assert pending.json()["status"] == "failed"
    assert bad.status_code == 422 and set(bad.json()["errors"]) == {"reason", "webhook"}
    assert not_json.status_code == 422


def test_reverse_after_success_fault_reverses_on_its_own(start_sandbox, receiver):
    """Set through POST /_sandbox/faults, the fault reverses a success after the delay."""
    box = start_sandbox(webhook_url=receiver.url)
    with box.control() as control:
        answer = control.post(
            "/_sandbox/faults", json={"reverse_after_success": 1, "reverse_after_seconds": 0.1}
        )
    assert answer.status_code == 200
    _succeeded(box, receiver, "rv-auto")
    wait_until(lambda: _lookup(box, "rv-auto")["status"] == "failed")
    truth = box.world.transfer_view("rv-auto")
    assert "reverse_after_success" in truth["faults"]
    attempts = wait_until(lambda: [a for a in box.world.attempts() if a.event == "transfer.failed"])
    # Dropped or delivered, as decided for this reference; either way logged.
    assert attempts[0].dropped == ("reverse_webhook_dropped" in truth["faults"])


def test_fault_route_takes_the_new_keys_and_refuses_bad_values(start_sandbox):
    """Good reversal and statement fault values are taken as given; out-of-range ones are
    422 naming the key."""
    box = start_sandbox()
    good = {
        "reverse_after_success": 0.5,
        "reverse_after_seconds": 2,
        "statement_drop_line": 2,
        "statement_unknown_debit": 0.25,
        "statement_fee_drift": 1,
    }
    with box.control() as control:
        taken = control.post("/_sandbox/faults", json=good)
        assert taken.status_code == 200
        assert {key: taken.json()["faults"][key] for key in good} == good
        for body in (
            {"reverse_after_success": 1.5},
            {"statement_drop_line": -1},
            {"statement_fee_drift": "half"},
        ):
            response = control.post("/_sandbox/faults", json=body)
            assert response.status_code == 422
            assert set(response.json()["errors"]) == set(body)


def test_funding_shows_on_the_wallet_and_the_bank_statement(sandbox):
    """A funding is 201 with an FND_ reference; the wallet statement has the credit and the
    bank statement the same debit from a ₦100,000,000 opening balance."""
    with sandbox.control() as control:
        funded = control.post("/_sandbox/wallet/fund", json={"amount": 2_500_000})
        refused = control.post("/_sandbox/wallet/fund", json={"amount": 0})
        wallet = control.get("/_sandbox/wallet/statement", params={"format": "csv"})
        bank = control.get("/_sandbox/bank/statement", params={"format": "camt053"})
    assert funded.status_code == 201 and refused.status_code == 422
    reference = funded.json()["data"]["reference"]
    assert reference.startswith("FND_")
    (credit,) = read_csv(wallet.content).lines
    assert (credit.reference, credit.signed) == (reference, 2_500_000)
    read = read_camt053(bank.content)
    assert account_of_camt053(bank.content) == "SANDBOX-BANK-0123456789"
    assert [(line.reference, line.signed, line.narration) for line in read.lines] == [
        (reference, -2_500_000, "Transfer to provider wallet")
    ]
    assert (read.opening, read.closing) == (10_000_000_000, 10_000_000_000 - 2_500_000)


@pytest.mark.parametrize(
    ("fmt", "media_type"),
    [
        ("csv", "text/csv; charset=utf-8"),
        ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        ("mt940", "text/plain; charset=utf-8"),
        ("camt053", "application/xml"),
    ],
)
def test_wallet_statement_route_serves_each_format(sandbox, receiver, fmt, media_type):
    """Each format is served with its media type and reads back to the wallet's movements."""
    _succeeded(sandbox, receiver, f"st-{fmt}")
    with sandbox.control() as control:
        response = control.get("/_sandbox/wallet/statement", params={"format": fmt})
    assert response.status_code == 200
    assert response.headers["content-type"] == media_type
    assert "attachment" in response.headers["content-disposition"]
    reader = {"csv": read_csv, "xlsx": read_xlsx, "mt940": read_mt940, "camt053": read_camt053}
    read = reader[fmt](response.content)
    assert [line.signed for line in read.lines] == [m.signed for m in sandbox.world.movements()]
    assert gaps(sandbox.config.wallet_balance, read.lines) == []


@pytest.mark.parametrize(
    ("params", "bad"),
    [
        ({"since": "2026-13-01"}, {"since"}),
        ({"until": "28/05/2026"}, {"until"}),
        ({"since": "2026-05-02", "until": "2026-05-01"}, {"until"}),
        ({"format": "pdf"}, {"format"}),
        ({"since": "yesterday", "format": "ods"}, {"since", "format"}),
    ],
)
def test_statement_routes_answer_400_for_bad_query_values(shared_sandbox, params, bad):
    """A bad date, a reversed range or an unknown format is 400 naming each parameter."""
    with shared_sandbox.control() as control:
        for path in ("/_sandbox/wallet/statement", "/_sandbox/bank/statement"):
            response = control.get(path, params=params)
            assert response.status_code == 400
            assert set(response.json()["errors"]) == bad


def test_statement_faults_set_through_the_control_route(start_sandbox, receiver):
    """drop_line leaves a gap, unknown_debit adds a TRF_ payout no lookup knows, fee_drift
    makes a fee line differ from the lookup's fee; the wallet followed all but the drop."""
    box = start_sandbox(webhook_url=receiver.url)
    with box.control() as control:
        control.post(
            "/_sandbox/faults",
            json={"statement_drop_line": 1, "statement_unknown_debit": 1, "statement_fee_drift": 1},
        )
    done = _succeeded(box, receiver, "sf-1")
    with box.control() as control:
        body = control.get("/_sandbox/wallet/statement", params={"format": "mt940"}).content
    read = read_mt940(body)
    references = [line.reference for line in read.lines]
    assert references[0] == done["reference"]  # its amount line (the first) was dropped
    fee_line = read.lines[0]
    assert -fee_line.signed == done["fee"] + 500
    (outside,) = {r for r in references if r != done["reference"]}
    assert outside.startswith("TRF_")
    with box.client() as client:
        assert client.get(f"/v1/transaction/{outside}").status_code == 404
    assert read.opening + sum(line.signed for line in read.lines) != read.closing
    assert read.closing == box.world.balance
    movements = box.world.movements()
    assert read.opening + sum(m.signed for m in movements) == read.closing
