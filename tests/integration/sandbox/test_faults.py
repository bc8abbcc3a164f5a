"""Each fault, injected with probability 1 (or 0), does what its key says and is recorded."""

from __future__ import annotations

import httpx
import pytest

from sandbox.faults import FEE_DRIFT_DELTA, TAMPER_AMOUNT_DELTA, TAMPER_FEE_DELTA, Faults
from tests.integration.sandbox.conftest import GOOD_ACCOUNT, transfer_body, wait_until

ENQUIRY = {"account_number": GOOD_ACCOUNT[1], "bank_code": GOOD_ACCOUNT[0]}


def _box(start_sandbox, receiver, **faults):
    return start_sandbox(webhook_url=receiver.url, faults=Faults(**faults))


def _initiate(box, reference, **kwargs):
    with box.client() as client:
        response = client.post("/v1/transfer/initiate", json=transfer_body(reference, **kwargs))
    assert response.status_code == 200
    return response.json()["data"]


def _transfer(box, reference):
    with box.control() as control:
        listing = control.get("/_sandbox/transfers").json()["transfers"]
    return next(t for t in listing if t["merchant_reference"] == reference)


def _attempts(box):
    with box.control() as control:
        return control.get("/_sandbox/webhooks").json()["attempts"]


def test_webhook_drop_never_delivers_and_logs_it(start_sandbox, receiver):
    """A dropped webhook never reaches the receiver; the log shows it as dropped."""
    box = _box(start_sandbox, receiver, webhook_drop=1.0)
    _initiate(box, "f-drop")
    attempts = wait_until(lambda: _attempts(box))
    assert attempts[0]["dropped"] is True
    assert "webhook_drop" in _transfer(box, "f-drop")["faults"]
    assert receiver.deliveries == []


def test_webhook_duplicate_delivers_twice(start_sandbox, receiver):
    """A duplicated webhook arrives twice with the same body."""
    box = _box(start_sandbox, receiver, webhook_duplicate=1.0)
    _initiate(box, "f-dup")
    wait_until(lambda: len(receiver.deliveries) == 2)
    assert receiver.bodies()[0] == receiver.bodies()[1]
    assert [a["copy"] for a in _attempts(box)] == [1, 2]


def test_webhook_delay_holds_the_delivery(start_sandbox, receiver):
    """A delayed webhook is recorded as delayed and still arrives."""
    box = _box(start_sandbox, receiver, webhook_delay=1.0, webhook_delay_seconds=0.2)
    _initiate(box, "f-delay")
    wait_until(lambda: receiver.deliveries)
    assert _attempts(box)[0]["faults"] == ["webhook_delay"]
    assert _transfer(box, "f-delay")["status"] == "successful"


def test_webhook_reorder_releases_after_the_next_delivery(start_sandbox, receiver):
    """A held webhook arrives after the next transfer's webhook, though it completed first."""
    box = start_sandbox(webhook_url=receiver.url, complete_after=None)
    with box.control() as control:
        control.post("/_sandbox/faults", json={"webhook_reorder": 1.0})
        _initiate(box, "f-held")  # faults are decided at initiation
        control.post("/_sandbox/faults", json={})
        _initiate(box, "f-next")
    with box.control() as control:
        control.post("/_sandbox/transfers/f-held/complete", json={"status": "successful"})
        control.post("/_sandbox/transfers/f-next/complete", json={"status": "successful"})
    wait_until(lambda: len(receiver.deliveries) == 2)
    order = [b["data"]["merchant_reference"] for b in receiver.bodies()]
    assert order == ["f-next", "f-held"]
    assert "webhook_reorder" in _transfer(box, "f-held")["faults"]


def test_tamper_amount_and_fee_change_only_the_webhook(start_sandbox, receiver):
    """Tampered webhook figures differ from the provider record, which stays true."""
    box = _box(start_sandbox, receiver, tamper_amount=1.0, tamper_fee=1.0)
    quoted = _initiate(box, "f-tamper", amount=50_000)
    wait_until(lambda: receiver.deliveries)
    data = receiver.bodies()[0]["data"]
    with box.client() as client:
        record = client.get("/v1/transaction/f-tamper").json()["data"]
    assert data["amount"] == 50_000 + TAMPER_AMOUNT_DELTA
    assert data["fee"] == quoted["fee"] + TAMPER_FEE_DELTA
    assert (record["amount"], record["fee"]) == (50_000, quoted["fee"])
    assert {"tamper_amount", "tamper_fee"} <= set(_transfer(box, "f-tamper")["faults"])


def test_fee_drift_charges_a_different_fee_than_quoted(start_sandbox, receiver):
    """With fee drift the record, the webhook and the wallet use the drifted fee."""
    box = _box(start_sandbox, receiver, fee_drift=1.0)
    balance = box.world.balance
    quoted = _initiate(box, "f-drift", amount=10_000)
    wait_until(lambda: receiver.deliveries)
    truth = _transfer(box, "f-drift")
    assert truth["fee_charged"] == quoted["fee"] + FEE_DRIFT_DELTA
    assert truth["fee"] == truth["fee_charged"]
    assert receiver.bodies()[0]["data"]["fee"] == truth["fee_charged"]
    assert box.world.balance == balance - 10_000 - truth["fee_charged"]


def test_stuck_pending_never_completes_until_forced(start_sandbox, receiver):
    """A stuck transfer stays pending while an unaffected one completes."""
    box = _box(start_sandbox, receiver, stuck_pending=1.0)
    _initiate(box, "f-stuck")
    box.world.set_faults(Faults())
    _initiate(box, "f-moving")
    wait_until(lambda: _transfer(box, "f-moving")["status"] == "successful")
    assert _transfer(box, "f-stuck")["status"] == "pending"
    assert "stuck_pending" in _transfer(box, "f-stuck")["faults"]


def test_fail_rate_fails_with_reason_and_keeps_fee(start_sandbox, receiver):
    """A fail_rate transfer fails with a failure_reason; the fee stays charged."""
    box = _box(start_sandbox, receiver, fail_rate=1.0)
    balance = box.world.balance
    _initiate(box, "f-fail", amount=10_000)
    wait_until(lambda: receiver.deliveries)
    body = receiver.bodies()[0]
    assert body["event"] == "transfer.failed"
    assert body["data"]["failure_reason"]
    assert box.world.balance == balance - 1_000


@pytest.mark.parametrize(("key", "status"), [("lookup_5xx", 503), ("lookup_429", 429)])
def test_lookup_error_faults(start_sandbox, receiver, key, status):
    """lookup_5xx answers 503 and lookup_429 answers 429 with Retry-After, and both count."""
    box = start_sandbox(webhook_url=receiver.url, faults=Faults(lookup_retry_after=3, **{key: 1.0}))
    with box.client() as client:
        response = client.get("/v1/transaction/anything")
    assert response.status_code == status
    if status == 429:
        assert response.headers["retry-after"] == "3"
    with box.control() as control:
        assert control.get("/_sandbox/faults").json()["injected"] == {key: 1}


def test_lookup_timeout_makes_the_client_time_out(start_sandbox, receiver):
    """With lookup_timeout the answer comes later than a short client timeout."""
    faults = Faults(lookup_timeout=1.0, lookup_timeout_seconds=2.0)
    box = start_sandbox(webhook_url=receiver.url, faults=faults)
    with box.client(timeout=0.3) as client, pytest.raises(httpx.ReadTimeout):
        client.get("/v1/transaction/anything")


def test_lookup_latency_still_answers(start_sandbox, receiver):
    """lookup_latency slows lookups but they still answer normally."""
    box = start_sandbox(webhook_url=receiver.url, faults=Faults(lookup_latency=0.05))
    with box.client() as client:
        assert client.get("/v1/transaction/none").status_code == 404


def test_enquiry_unavailable_is_503(start_sandbox, receiver):
    """enquiry_unavailable answers 503 Service unavailable."""
    box = start_sandbox(webhook_url=receiver.url, faults=Faults(enquiry_unavailable=1.0))
    with box.client() as client:
        response = client.get("/v1/account-enquiry", params=ENQUIRY)
    assert response.status_code == 503
    assert response.json() == {"status": "failed", "message": "Service unavailable"}


def test_enquiry_slow_makes_the_client_time_out(start_sandbox, receiver):
    """enquiry_slow delays the enquiry beyond a short client timeout."""
    box = start_sandbox(webhook_url=receiver.url, faults=Faults(enquiry_slow=2.0))
    with box.client(timeout=0.3) as client, pytest.raises(httpx.ReadTimeout):
        client.get("/v1/account-enquiry", params=ENQUIRY)


def test_enquiry_rate_limit_per_account(start_sandbox, receiver):
    """Over the limit for one account within 10 s is 429; another account is unaffected."""
    box = start_sandbox(webhook_url=receiver.url, faults=Faults(enquiry_rate_limit=2))
    with box.client() as client:
        codes = [client.get("/v1/account-enquiry", params=ENQUIRY) for _ in range(3)]
        other = client.get(
            "/v1/account-enquiry", params={"account_number": "0570000015", "bank_code": "057"}
        )
    assert [r.status_code for r in codes] == [200, 200, 429]
    assert int(codes[2].headers["retry-after"]) >= 1
    assert other.status_code == 200


def test_faults_route_replaces_set_and_rejects_bad_keys(sandbox):
    """POST /_sandbox/faults replaces the set; unknown keys and bad values are 422."""
    with sandbox.control() as control:
        ok = control.post("/_sandbox/faults", json={"seed": 3, "webhook_drop": 0.5})
        unknown = control.post("/_sandbox/faults", json={"webhook_explode": 1})
        bad = control.post("/_sandbox/faults", json={"webhook_drop": 2})
        shown = control.get("/_sandbox/faults").json()["faults"]
    assert ok.status_code == 200
    assert unknown.status_code == 422
    assert "webhook_explode" in unknown.json()["errors"]
    assert bad.status_code == 422
    assert (shown["seed"], shown["webhook_drop"]) == (3, 0.5)


def test_same_seed_gives_the_same_faults(start_sandbox, receiver):
    """Two sandboxes with the same seed and references inject the same faults."""
    faults = Faults(seed=11, webhook_drop=0.3, tamper_fee=0.3, stuck_pending=0.3)
    boxes = [start_sandbox(webhook_url=receiver.url, faults=faults, complete_after=None)]
    boxes.append(start_sandbox(webhook_url=receiver.url, faults=faults, complete_after=None))
    for box in boxes:
        with box.client() as client:
            for i in range(30):
                body = transfer_body(f"f-seed-{i}")
                assert client.post("/v1/transfer/initiate", json=body).status_code == 200
    runs = [[(t["reference"], t["faults"]) for t in b.world.transfers()] for b in boxes]
    assert runs[0] == runs[1]
    assert any(faults for _, faults in runs[0])
