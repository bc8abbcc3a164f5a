"""Conformance: Events (spec) — webhook bodies, retries, signing, throughput."""

from __future__ import annotations

import base64
import hashlib
import hmac

from tests.integration.sandbox.conftest import DORMANT_ACCOUNT, transfer_body, wait_until


def _initiate(box, reference, **kwargs):
    with box.client() as client:
        response = client.post("/v1/transfer/initiate", json=transfer_body(reference, **kwargs))
    assert response.status_code == 200
    return response.json()["data"]


def _attempts(box):
    with box.control() as control:
        return control.get("/_sandbox/webhooks").json()["attempts"]


def test_success_webhook_has_exactly_the_spec_fields(sandbox, receiver):
    """transfer.success carries exactly reference, merchant_reference, amount, status, fee."""
    quoted = _initiate(sandbox, "w-ok", amount=70_000)
    wait_until(lambda: receiver.deliveries)
    delivery = receiver.deliveries[0]
    assert delivery["headers"]["content-type"] == "application/json"
    assert delivery["json"] == {
        "event": "transfer.success",
        "data": {
            "reference": quoted["reference"],
            "merchant_reference": "w-ok",
            "amount": 70_000,
            "status": "successful",
            "fee": quoted["fee"],
        },
    }


def test_failed_webhook_has_exactly_the_spec_fields(sandbox, receiver):
    """transfer.failed carries exactly reference, merchant_reference, status, failure_reason."""
    quoted = _initiate(sandbox, "w-fail", account=DORMANT_ACCOUNT)
    wait_until(lambda: receiver.deliveries)
    assert receiver.bodies()[0] == {
        "event": "transfer.failed",
        "data": {
            "reference": quoted["reference"],
            "merchant_reference": "w-fail",
            "status": "failed",
            "failure_reason": "Beneficiary account is dormant",
        },
    }


def test_non_2xx_is_retried_and_every_attempt_recorded(sandbox, receiver):
    """Two 500 answers then 200: three attempts, all recorded with their status codes."""
    receiver.statuses.extend([500, 503])
    _initiate(sandbox, "w-retry")
    wait_until(lambda: len(receiver.deliveries) == 3)
    attempts = wait_until(lambda: len(a := _attempts(sandbox)) == 3 and a)
    assert [a["attempt"] for a in attempts] == [1, 2, 3]
    assert [a["status_code"] for a in attempts] == [500, 503, 200]
    assert [a["delivered"] for a in attempts] == [False, False, True]
    assert {a["url"] for a in attempts} == {receiver.url}
    assert all(a["body"] == receiver.bodies()[0] for a in attempts)


def test_retries_stop_after_the_schedule(start_sandbox, receiver):
    """A receiver that always fails gets len(delays) + 1 attempts, then no more."""
    box = start_sandbox(webhook_url=receiver.url, webhook_retry_delays=(0.02, 0.02))
    receiver.statuses.extend([500] * 10)
    _initiate(box, "w-giveup")
    wait_until(lambda: len(_attempts(box)) == 3)
    _initiate(box, "w-after")  # a later delivery proves the worker moved on
    wait_until(lambda: any(a["merchant_reference"] == "w-after" for a in _attempts(box)))
    assert [a["attempt"] for a in _attempts(box) if a["merchant_reference"] == "w-giveup"] == [
        1,
        2,
        3,
    ]


def test_connection_error_is_recorded_and_retried(start_sandbox, receiver):
    """An unreachable URL is recorded with an error and retried on schedule."""
    box = start_sandbox(webhook_url="http://127.0.0.1:9/unreachable")
    _initiate(box, "w-down")
    attempts = wait_until(lambda: len(a := _attempts(box)) == 4 and a)
    assert all(a["status_code"] is None and a["error"] for a in attempts)


def test_signing_headers_when_configured(start_sandbox, receiver):
    """Shared secret, HMAC-SHA512 and Standard Webhooks headers verify over the raw body."""
    key = b"0123456789abcdef0123456789abcdef"
    standard = "whsec_" + base64.b64encode(key).decode()
    box = start_sandbox(
        webhook_url=receiver.url,
        webhook_secret="shared-secret",
        webhook_hmac_secret="hmac-secret",
        webhook_standard_secret=standard,
    )
    _initiate(box, "w-signed")
    wait_until(lambda: receiver.deliveries)
    raw, headers = receiver.deliveries[0]["raw"], receiver.deliveries[0]["headers"]
    expected_hmac = hmac.new(b"hmac-secret", raw, hashlib.sha512).hexdigest()
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + raw
    expected_std = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    assert headers["x-webhook-secret"] == "shared-secret"
    assert headers["x-webhook-signature"] == expected_hmac
    assert headers["webhook-signature"] == f"v1,{expected_std}"


def test_no_signing_headers_by_default(sandbox, receiver):
    """Without signing options a delivery carries no signature headers."""
    _initiate(sandbox, "w-plain")
    wait_until(lambda: receiver.deliveries)
    headers = receiver.deliveries[0]["headers"]
    assert not {"x-webhook-secret", "x-webhook-signature", "webhook-signature"} & set(headers)


def test_many_transfers_all_complete_and_deliver(sandbox, receiver):
    """250 transfers all complete and each webhook arrives once (deliveries run concurrently)."""
    with sandbox.client() as client:
        for i in range(250):
            body = transfer_body(f"w-bulk-{i}", amount=1_000)
            assert client.post("/v1/transfer/initiate", json=body).status_code == 200
    wait_until(lambda: len(receiver.deliveries) == 250, timeout=30)
    references = {b["data"]["merchant_reference"] for b in receiver.bodies()}
    assert references == {f"w-bulk-{i}" for i in range(250)}
