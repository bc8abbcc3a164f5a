"""Every status code of `POST /webhook` against a real server, on SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import socket

import httpx
import pytest
import structlog
from sqlalchemy import Engine, func, select
from standardwebhooks.webhooks import Webhook

from ledger.db import read_session
from ledger.models import Delivery, Transfer, WebhookEvent
from payrecon.app import create_app
from payrecon.logconfig import configure_logging
from payrecon.settings import load_settings
from tests.support.apps import ADMIN, StartReceiver
from tests.support.servers import running_server
from tests.support.webhooks import encode, failed_body, success_body

JSON = {"content-type": "application/json"}


def _post(url: str, body: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(f"{url}/webhook", content=body, headers={**JSON, **(headers or {})})


def _count(engine: Engine, model: type) -> int:
    with read_session(engine) as session:
        return int(session.execute(select(func.count()).select_from(model)).scalar_one())


def test_a_new_event_is_accepted_then_duplicate(receiver_url: str, engine: Engine) -> None:
    """The first copy is accepted, an identical copy is a duplicate; one event is stored."""
    body = encode(success_body("TRF_A"))
    first = _post(receiver_url, body)
    second = _post(receiver_url, json.dumps(json.loads(body), indent=2).encode())
    assert (first.status_code, first.json()) == (200, {"status": "ok", "outcome": "accepted"})
    assert (second.status_code, second.json()) == (200, {"status": "ok", "outcome": "duplicate"})
    assert _count(engine, WebhookEvent) == 1
    assert _count(engine, Delivery) == 2


def test_an_unknown_event_type_is_ignored_and_archived(receiver_url: str, engine: Engine) -> None:
    """A well-formed event we do not handle answers ignored and is stored, not applied."""
    response = _post(receiver_url, b'{"event": "collection.paid", "data": {"reference": "C"}}')
    assert response.json()["outcome"] == "ignored"
    assert _count(engine, Delivery) == 1
    assert _count(engine, Transfer) == 0


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [
        (b"{not json", "application/json", 400),
        (b"{}", "text/plain", 415),
        (
            b'{"event": "transfer.success", "data": {"reference": "R", "amount": 1.5, '
            b'"fee": 1, "status": "successful"}}',
            "application/json",
            422,
        ),
        (
            b'{"event": "transfer.failed", "data": {"reference": "R", "status": "paid"}}',
            "application/json",
            422,
        ),
    ],
)
def test_bad_bodies_get_clear_errors_and_are_archived(
    receiver_url: str, engine: Engine, body: bytes, content_type: str, status: int
) -> None:
    """Malformed JSON is 400, a wrong media type 415, an invalid event 422; all archived."""
    response = httpx.post(
        f"{receiver_url}/webhook", content=body, headers={"content-type": content_type}
    )
    assert response.status_code == status
    assert response.json()["status"] == "error" and response.json()["message"]
    assert _count(engine, Delivery) == 1
    assert _count(engine, WebhookEvent) == 0


def test_a_body_over_the_limit_is_413_even_when_streamed(
    start_receiver: StartReceiver, engine: Engine
) -> None:
    """The limit is counted while streaming: a chunked body without a length still gets 413."""
    with start_receiver(max_body_bytes=1024) as url:

        def chunks():  # type: ignore[no-untyped-def]
            for _ in range(64):
                yield b" " * 512

        response = httpx.post(f"{url}/webhook", content=chunks(), headers=JSON)
        declared = _post(url, b" " * 2048)
    assert response.status_code == 413
    assert declared.status_code == 413
    with read_session(engine) as session:
        heads = sorted(
            (d.outcome, len(d.body)) for d in session.execute(select(Delivery)).scalars()
        )
    # The streamed one keeps the first 1,024 bytes as evidence; the declared one was never read.
    assert heads == [("too_large", 0), ("too_large", 1024)]


def test_other_methods_are_405(receiver_url: str) -> None:
    """GET, PUT and DELETE on either webhook route answer 405 in JSON, with Allow: POST."""
    for method in ("GET", "PUT", "DELETE"):
        for path in ("/webhook", "/webhook/some-token"):
            response = httpx.request(method, f"{receiver_url}{path}")
            assert response.status_code == 405
            assert response.json()["error"] == "method_not_allowed"
            assert response.headers["allow"] == "POST"
            assert len(response.headers["x-request-id"]) == 32


def test_only_the_two_webhook_paths_exist(receiver_url: str, engine: Engine) -> None:
    """A deeper path is 404 and a trailing slash redirects to /webhook, as routing always did."""
    deeper = httpx.post(f"{receiver_url}/webhook/a/b", content=b"{}", headers=JSON)
    slash = httpx.post(f"{receiver_url}/webhook/", content=b"{}", headers=JSON)
    assert (deeper.status_code, deeper.json()["error"]) == (404, "not_found")
    assert slash.status_code == 307
    assert slash.headers["location"] == "/webhook"  # relative: never built from Host
    assert _count(engine, Delivery) == 0


@pytest.mark.parametrize("value", [b"id\x00x", b"id\x01x", b"id\x7fx"])
def test_a_header_with_control_characters_is_refused_before_the_endpoint(
    receiver_url: str, engine: Engine, value: bytes
) -> None:
    """The HTTP server answers 400 to a control character in a header, so none reaches the
    archive or the `webhook-id` column."""
    body = encode(success_body("CTL-1"))
    request = (
        b"POST /webhook HTTP/1.1\r\nHost: r\r\nContent-Type: application/json\r\n"
        b"webhook-id: " + value + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n"
        b"Connection: close\r\n\r\n" + body
    )
    host, port = receiver_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        status_line = sock.recv(4096).split(b"\r\n", 1)[0]
    assert status_line.split(b" ")[1] == b"400"
    assert _count(engine, Delivery) == 0


def test_a_failure_reason_with_unstorable_characters_is_applied(
    receiver_url: str, engine: Engine
) -> None:
    """A NUL and a lone surrogate in the failure reason (PostgreSQL's text takes neither) do
    not cost the event: it is accepted and the reason stored without them."""
    body = json.dumps(failed_body("TRF-R1", reason="bank\x00 off \ud800")).encode()
    response = _post(receiver_url, body)
    with read_session(engine) as session:
        transfer = session.execute(
            select(Transfer).where(Transfer.reference == "m-TRF-R1")
        ).scalar_one()
    assert (response.status_code, response.json()["outcome"]) == (200, "accepted")
    assert (transfer.status, transfer.failure_reason) == ("failed", "bank off \ufffd")


def test_the_path_token_hides_the_plain_route(
    start_receiver: StartReceiver, engine: Engine
) -> None:
    """With a token, /webhook is 404, a wrong token 401 and not archived, the right one 200."""
    token = "Tok" + "x" * 29
    with start_receiver(webhook_token=token) as url:
        plain = _post(url, encode(success_body("T1")))
        wrong = httpx.post(
            f"{url}/webhook/{'y' * 32}", content=encode(success_body("T1")), headers=JSON
        )
        right = httpx.post(
            f"{url}/webhook/{token}", content=encode(success_body("T1")), headers=JSON
        )
    assert (plain.status_code, wrong.status_code, right.status_code) == (404, 401, 200)
    assert _count(engine, Delivery) == 1


def test_shared_secret_and_hmac_are_both_required_when_set(
    start_receiver: StartReceiver, engine: Engine
) -> None:
    """Each configured check must pass; failures are 401 and never archived."""
    secret, key = "shared-secret-value-1", "hmac-key-value-123456"
    body = encode(success_body("T2"))
    signature = hmac.new(key.encode(), body, hashlib.sha512).hexdigest()
    with start_receiver(webhook_secret=secret, webhook_hmac_secret=key) as url:
        no_secret = _post(url, body, {"X-Webhook-Signature": signature})
        bad_sig = _post(url, body, {"X-Webhook-Secret": secret, "X-Webhook-Signature": "00"})
        good = _post(url, body, {"X-Webhook-Secret": secret, "X-Webhook-Signature": signature})
    assert (no_secret.status_code, bad_sig.status_code, good.status_code) == (401, 401, 200)
    assert _count(engine, Delivery) == 1


def test_standard_webhooks_dedupe_on_webhook_id(
    start_receiver: StartReceiver, engine: Engine
) -> None:
    """A signed delivery passes; the same webhook-id again is a duplicate."""
    secret = "whsec_" + base64.b64encode(b"k" * 24).decode()
    body = encode(success_body("T3"))

    def headers(msg_id: str) -> dict[str, str]:
        import datetime as dt

        now = dt.datetime.now(dt.UTC)
        return {
            "webhook-id": msg_id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": Webhook(secret).sign(msg_id, now, body.decode()),
        }

    with start_receiver(webhook_standard_secret=secret) as url:
        unsigned = _post(url, body)
        first = _post(url, body, headers("msg_1"))
        again = _post(url, body, headers("msg_1"))
    assert unsigned.status_code == 401
    assert first.json()["outcome"] == "accepted"
    assert again.json()["outcome"] == "duplicate"


def test_the_ip_allowlist_believes_only_trusted_proxies(start_receiver: StartReceiver) -> None:
    """An address off the allowlist is 403; X-Forwarded-For counts only from a trusted proxy."""
    with start_receiver(webhook_allowed_ips="192.0.2.10") as url:
        direct = _post(url, encode(success_body("T4")))
        spoofed = _post(url, encode(success_body("T4")), {"X-Forwarded-For": "192.0.2.10"})
    with start_receiver(webhook_allowed_ips="192.0.2.10", trusted_proxies="127.0.0.1") as url:
        proxied = _post(url, encode(success_body("T4")), {"X-Forwarded-For": "192.0.2.10"})
    assert (direct.status_code, spoofed.status_code, proxied.status_code) == (403, 403, 200)


def test_a_database_that_cannot_take_the_write_gives_503() -> None:
    """When the ledger is unreachable the provider is told to retry, with no 500."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = load_settings(database_url=f"postgresql+psycopg://postgres@127.0.0.1:{port}/none")
    with running_server(create_app(settings)) as url:
        response = _post(url, encode(success_body("T5")))
        ready = httpx.get(f"{url}/readyz")
    assert response.status_code == 503
    assert response.headers["retry-after"]
    assert ready.status_code == 503


def test_both_outcomes_and_conflicting_copies_raise_findings(
    receiver_url: str, engine: Engine
) -> None:
    """success then failed raises status_conflict; a changed copy raises conflicting_delivery."""
    _post(receiver_url, encode(success_body("T6", amount=500)))
    _post(receiver_url, encode(failed_body("T6")))
    changed = _post(receiver_url, encode(success_body("T6", amount=999)))
    record = httpx.get(
        f"{receiver_url}/api/transfers/T6", headers={"authorization": f"Bearer {ADMIN}"}
    ).json()
    kinds = sorted(f["kind"] for f in record["findings"])
    assert changed.status_code == 200
    assert kinds == ["conflicting_delivery", "orphan_event", "status_conflict"]
    assert record["status"] == "successful" and record["webhook_amount"] == 500
    assert record["confirmed"] is False
    assert record["deliveries"] == 3


def test_health_and_metrics_answer(receiver_url: str) -> None:
    """healthz and readyz are 200; metrics count deliveries by outcome."""
    _post(receiver_url, encode(success_body("T7")))
    assert httpx.get(f"{receiver_url}/healthz").status_code == 200
    assert httpx.get(f"{receiver_url}/readyz").status_code == 200
    text = httpx.get(f"{receiver_url}/metrics").text
    assert 'payrecon_webhook_deliveries_total{outcome="accepted"} 1.0' in text
    assert "payrecon_ingest_batch_size_bucket" in text


def test_the_request_id_is_echoed(receiver_url: str) -> None:
    """A sane X-Request-ID comes back; otherwise one is made up."""
    given = httpx.get(f"{receiver_url}/healthz", headers={"x-request-id": "abc-123"})
    made = httpx.get(f"{receiver_url}/healthz", headers={"x-request-id": "bad id!"})
    assert given.headers["x-request-id"] == "abc-123"
    assert made.headers["x-request-id"] != "bad id!" and len(made.headers["x-request-id"]) == 32


def test_order_of_arrival_does_not_change_the_applied_evidence(
    start_receiver: StartReceiver, engine: Engine
) -> None:
    """Whatever the order, the first outcome is recorded and confirmed stays false."""
    with start_receiver() as url:
        _post(url, encode(failed_body("T8")))
        _post(url, encode(success_body("T8")))
        _post(url, encode(failed_body("T8")))
    with read_session(engine) as session:
        transfer = session.execute(select(Transfer)).scalar_one()
    assert transfer.webhook_status == "failed" and not transfer.confirmed
    assert transfer.next_check_at is not None


def test_a_real_server_logs_one_line_per_delivery_without_the_token(
    start_receiver: StartReceiver, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through uvicorn, each delivery is one JSON request line and the token never shows."""
    token = "Tok" + "z" * 29
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging(secrets=[token], json=True)
    try:
        with start_receiver(webhook_token=token) as url:
            response = httpx.post(
                f"{url}/webhook/{token}",
                content=encode(success_body("LOG1")),
                headers={**JSON, "x-request-id": "log-1"},
            )
            httpx.post(f"{url}/webhook/{token}", content=b"{bad", headers=JSON)
    finally:
        structlog.reset_defaults()
        root.handlers[:] = handlers
        root.setLevel(level)
    err = capsys.readouterr().err
    assert token not in err
    logged = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    lines = [line for line in logged if line["event"] == "request"]
    assert response.headers["x-request-id"] == "log-1"
    assert [(x["status"], x["outcome"], x["path"]) for x in lines] == [
        (200, "accepted", "/webhook/[token]"),
        (400, "invalid", "/webhook/[token]"),
    ]
    assert lines[0]["request_id"] == "log-1" and lines[0]["reference"] == "LOG1"
    assert lines[1]["error"] == "malformed_json" and len(lines[1]["request_id"]) == 32
