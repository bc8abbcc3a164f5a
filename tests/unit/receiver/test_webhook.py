"""The webhook endpoint as bare ASGI, with a stand-in writer: answers, routing and its log line."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import structlog
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from ledger.types import DeliveryOutcome, FindingKind
from payrecon.logconfig import configure_logging
from receiver.apply import Applied, IncomingDelivery
from receiver.auth import SenderPolicy
from receiver.errors import IngestUnavailableError
from receiver.fastpath import WebhookRoutes, is_webhook, route_path
from receiver.metrics import create_metrics
from receiver.webhook import WebhookEndpoint, WebhookState
from tests.support.webhooks import encode, success_body

TOKEN = "Tok" + "x" * 29
JSON = {"content-type": "application/json"}


class _Writer:
    """Answers every delivery with one outcome (or refuses them all), keeping what it got."""

    def __init__(self, outcome: DeliveryOutcome | None = DeliveryOutcome.ACCEPTED) -> None:
        self.outcome = outcome
        self.deliveries: list[IncomingDelivery] = []

    async def submit(self, delivery: IncomingDelivery) -> Applied:
        self.deliveries.append(delivery)
        if self.outcome is None:
            raise IngestUnavailableError("the ledger could not store the delivery; retry later")
        return Applied(self.outcome, findings=[FindingKind.ORPHAN_EVENT])


async def _elsewhere(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 418, "headers": []})
    await send({"type": "http.response.body", "body": b"elsewhere"})


def _app(writer: _Writer, **policy: Any) -> WebhookRoutes:
    state = WebhookState(
        policy=SenderPolicy(**policy),
        writer=writer,  # type: ignore[arg-type]
        metrics=create_metrics(),
        max_body_bytes=1024,
        body_timeout=10.0,
    )
    return WebhookRoutes(_elsewhere, WebhookEndpoint(state))


def _call(app: WebhookRoutes, method: str, path: str, **kwargs: Any) -> httpx.Response:
    async def run() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=("192.0.2.7", 4000))
        async with httpx.AsyncClient(transport=transport, base_url="http://r") as client:
            return await client.request(method, path, **kwargs)

    return asyncio.run(run())


def _starlette(content: dict[str, Any], status: int, headers: dict[str, str] | None = None) -> Any:
    return JSONResponse(content, status_code=status, headers=headers)


@pytest.fixture
def log_lines(capsys: pytest.CaptureFixture[str]) -> Iterator[Any]:
    """JSON logging with the path token as a secret; yields a reader of the lines so far."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging(secrets=[TOKEN], json=True)

    def read() -> list[dict[str, Any]]:
        err = capsys.readouterr().err
        assert TOKEN not in err
        return [json.loads(line) for line in err.splitlines() if line.strip()]

    yield read
    structlog.reset_defaults()
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.parametrize(
    ("outcome", "public"),
    [
        (DeliveryOutcome.ACCEPTED, "accepted"),
        (DeliveryOutcome.DUPLICATE, "duplicate"),
        (DeliveryOutcome.CONFLICTING, "duplicate"),
        (DeliveryOutcome.IGNORED, "ignored"),
    ],
)
def test_success_answers_are_the_bytes_and_headers_starlette_sent(
    outcome: DeliveryOutcome, public: str
) -> None:
    """Each outcome answers the same body and headers as the JSONResponse it replaces."""
    response = _call(
        _app(_Writer(outcome)), "POST", "/webhook", content=encode(success_body("A")), headers=JSON
    )
    expected = _starlette({"status": "ok", "outcome": public}, 200)
    assert response.status_code == 200
    assert response.content == expected.body
    assert [(k, v) for k, v in response.headers.raw if k != b"x-request-id"] == expected.raw_headers
    assert len(response.headers["x-request-id"]) == 32


@pytest.mark.parametrize("method", ["GET", "HEAD", "PUT", "DELETE", "PATCH"])
def test_other_methods_are_405_with_an_allow_header(method: str) -> None:
    """Any other method on either webhook path is 405 in JSON, naming POST in Allow."""
    writer = _Writer()
    app = _app(writer)
    expected = _starlette(
        {"status": "error", "error": "method_not_allowed", "message": "Method Not Allowed"},
        405,
        {"Allow": "POST"},
    )
    for path in ("/webhook", "/webhook/abc"):
        response = _call(app, method, path, headers={"x-request-id": "req-1"})
        assert response.status_code == 405
        assert response.headers["allow"] == "POST"
        assert response.headers["x-request-id"] == "req-1"
        if method != "HEAD":
            assert response.content == expected.body
    assert writer.deliveries == []


def test_only_the_two_webhook_paths_are_dispatched() -> None:
    """`/webhook/a/b`, `/webhook/`, `/webhooks` and other paths go on to the rest of the app."""
    app = _app(_Writer())
    for path in ("/webhook/a/b", "/webhook/", "/webhooks", "/healthz"):
        assert _call(app, "POST", path, content=b"{}", headers=JSON).status_code == 418


@pytest.mark.parametrize(
    ("path", "root_path", "expected"),
    [
        ("/webhook", "", "/webhook"),
        ("/hooks/webhook", "/hooks", "/webhook"),
        ("/hooks", "/hooks", ""),
        ("/hooksx/webhook", "/hooks", "/hooksx/webhook"),
        ("/webhook", "/hooks", "/webhook"),
    ],
)
def test_route_path_strips_the_root_path_only_at_a_segment_boundary(
    path: str, root_path: str, expected: str
) -> None:
    """The dispatch matches the path below the mount point, as Starlette's router does."""
    assert route_path({"path": path, "root_path": root_path}) == expected


@pytest.mark.parametrize(
    ("path", "root_path"),
    [
        (path, root)
        for root in ("", "/hooks")
        for path in (
            "/webhook",
            "/webhook/tok",
            "/webhook/",
            "/webhook/a/b",
            "/webhooks",
            "/healthz",
            "/hooks/webhook",
            "/hooks/webhook/tok",
            "/hooks/webhook/a/b",
            "/hooksx/webhook",
            "/hooks",
        )
    ],
)
def test_is_webhook_names_exactly_what_the_dispatch_sends_to_the_endpoint(
    path: str, root_path: str
) -> None:
    """The paths tracing leaves to the group commit are those the dispatch hands the webhook
    endpoint, with or without a root path."""
    taken: list[str] = []

    def endpoint(scope: Any, receive: Any, send: Any) -> Any:
        taken.append("endpoint")

    def rest(scope: Any, receive: Any, send: Any) -> Any:
        taken.append("rest")

    scope = {"type": "http", "path": path, "root_path": root_path}
    WebhookRoutes(rest, endpoint)(dict(scope), None, None)  # type: ignore[arg-type]
    assert is_webhook(dict(scope)) == (taken == ["endpoint"])
    assert not is_webhook({"type": "lifespan"})


def test_a_receiver_mounted_under_a_root_path_still_takes_webhooks() -> None:
    """With a root path, `/hooks/webhook` reaches the endpoint and `/hooks/other` goes on."""
    writer = _Writer()
    app = _app(writer)

    body = encode(success_body("MOUNT-1"))

    async def run() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app, root_path="/hooks")
        async with httpx.AsyncClient(transport=transport, base_url="http://r") as client:
            return [
                await client.post("/hooks/webhook", content=body, headers=JSON),
                await client.post("/hooks/other", content=b"{}", headers=JSON),
            ]

    taken, other = asyncio.run(run())
    assert (taken.status_code, other.status_code) == (200, 418)
    assert len(writer.deliveries) == 1


def test_the_path_token_decides_which_path_answers() -> None:
    """With a token /webhook is 404 and a wrong token 401; without one /webhook/x is 404."""
    body = encode(success_body("T"))
    with_token = _app(_Writer(), token=TOKEN)
    without = _app(_Writer())
    plain = _call(with_token, "POST", "/webhook", content=body, headers=JSON)
    wrong = _call(with_token, "POST", "/webhook/nope", content=body, headers=JSON)
    right = _call(with_token, "POST", f"/webhook/{TOKEN}", content=body, headers=JSON)
    stray = _call(without, "POST", "/webhook/x", content=body, headers=JSON)
    assert (plain.status_code, wrong.status_code, right.status_code) == (404, 401, 200)
    assert stray.status_code == 404
    assert (
        plain.content
        == _starlette({"status": "error", "error": "not_found", "message": "Not Found"}, 404).body
    )


@pytest.mark.parametrize(
    ("body", "headers", "status", "content"),
    [
        (
            b"{nope",
            JSON,
            400,
            {
                "status": "error",
                "error": "malformed_json",
                "message": "body is not JSON: JSONDecodeError",
            },
        ),
        (
            b"{}",
            {"content-type": "text/plain"},
            415,
            {
                "status": "error",
                "error": "unsupported_media_type",
                "message": "Content-Type must be application/json",
            },
        ),
        (
            b'{"event": "transfer.success", "data": []}',
            JSON,
            422,
            {
                "status": "error",
                "error": "invalid_event",
                "message": "data must be a JSON object",
                "field": "data",
            },
        ),
        (
            b" " * 2000,
            JSON,
            413,
            {
                "status": "error",
                "error": "body_too_large",
                "message": "body of 2000 bytes is over the 1024-byte limit",
            },
        ),
    ],
)
def test_bad_deliveries_get_the_same_error_bodies_and_are_archived(
    body: bytes, headers: dict[str, str], status: int, content: dict[str, Any]
) -> None:
    """400, 415, 422 and 413 answer Starlette's bytes for the error and archive the delivery."""
    writer = _Writer()
    response = _call(_app(writer), "POST", "/webhook", content=body, headers=headers)
    assert response.status_code == status
    assert response.content == _starlette(content, status).body
    (delivery,) = writer.deliveries
    assert delivery.parsed is None and delivery.error is not None


def test_an_unavailable_ledger_is_503_with_retry_after() -> None:
    """When the writer cannot commit, the sender is told to retry in 5 seconds."""
    response = _call(
        _app(_Writer(None)), "POST", "/webhook", content=encode(success_body("U")), headers=JSON
    )
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert response.json()["error"] == "unavailable"


def test_the_archive_keeps_the_listed_headers_cut_to_500_characters() -> None:
    """Only the archived header subset is stored, each value cut at 500 characters."""
    writer = _Writer()
    headers = {**JSON, "user-agent": "u" * 600, "x-webhook-secret": "s3cret", "x-request-id": "r-1"}
    _call(_app(writer), "POST", "/webhook", content=encode(success_body("H")), headers=headers)
    (delivery,) = writer.deliveries
    assert set(delivery.headers) == {"content-type", "content-length", "user-agent", "x-request-id"}
    assert delivery.headers["user-agent"] == "u" * 500
    assert delivery.remote_addr == "192.0.2.7"


def test_one_canonical_line_per_delivery_with_its_outcome(log_lines: Any) -> None:
    """A delivery logs one request line with the request id, remote, outcome and event."""
    app = _app(_Writer(), token=TOKEN)
    _call(
        app,
        "POST",
        f"/webhook/{TOKEN}",
        content=encode(success_body("L1")),
        headers={**JSON, "x-request-id": "abc-1"},
    )
    (line,) = log_lines()
    assert line["event"] == "request" and line["level"] == "info"
    assert {k: line[k] for k in line if k not in ("duration_ms", "timestamp")} == {
        "event": "request",
        "level": "info",
        "method": "POST",
        "path": "/webhook/[token]",
        "status": 200,
        "request_id": "abc-1",
        "remote": "192.0.2.7",
        "outcome": "accepted",
        "webhook_event": "transfer.success",
        "reference": "L1",
        "findings": ["orphan_event"],
    }
    assert isinstance(line["duration_ms"], float)


def test_invalid_and_refused_deliveries_log_what_they_were(log_lines: Any) -> None:
    """An invalid delivery logs its error; a refusal warns with the request's id and address."""
    app = _app(_Writer(), token=TOKEN)
    _call(app, "POST", f"/webhook/{TOKEN}", content=b"{nope", headers=JSON)
    _call(app, "POST", "/webhook/wrong", content=b"{}", headers={**JSON, "x-request-id": "r-2"})
    invalid, warning, refused = log_lines()
    assert (invalid["status"], invalid["outcome"], invalid["error"]) == (
        400,
        "invalid",
        "malformed_json",
    )
    assert warning["event"] == "webhook refused" and warning["level"] == "warning"
    assert (warning["request_id"], warning["remote"], warning["status"]) == (
        "r-2",
        "192.0.2.7",
        401,
    )
    assert (refused["status"], refused["request_id"], refused["path"]) == (
        401,
        "r-2",
        "/webhook/[token]",
    )
    assert "outcome" not in refused


def test_the_line_follows_a_logging_reconfiguration(log_lines: Any) -> None:
    """After the endpoint has logged once, capture_logs still catches its next line."""
    app = _app(_Writer())
    _call(app, "POST", "/webhook", content=encode(success_body("C1")), headers=JSON)
    assert len(log_lines()) == 1
    with structlog.testing.capture_logs() as captured:
        _call(app, "POST", "/webhook", content=encode(success_body("C2")), headers=JSON)
    assert [(e["event"], e["reference"]) for e in captured] == [("request", "C2")]
    assert log_lines() == []


def test_a_sender_gone_mid_body_is_logged_as_499_and_not_archived(log_lines: Any) -> None:
    """A disconnect before the body ends sends nothing, archives nothing and logs status 499."""
    writer = _Writer()
    app = _app(writer)
    messages = iter(
        [{"type": "http.request", "body": b'{"ev', "more_body": True}, {"type": "http.disconnect"}]
    )
    sent: list[Any] = []

    async def receive() -> Any:
        return next(messages)

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/webhook",
        "raw_path": b"/webhook",
        "root_path": "",
        "headers": [(b"content-type", b"application/json")],
        "client": ("192.0.2.7", 4000),
    }
    asyncio.run(app(scope, receive, send))
    assert sent == [] and writer.deliveries == []
    (line,) = log_lines()
    assert (line["status"], line["path"]) == (499, "/webhook")


def test_the_webhook_state_repr_hides_the_sender_secrets() -> None:
    """The state the endpoint holds shows no token, shared secret, HMAC or whsec_ secret."""
    secrets = {
        "token": TOKEN,
        "shared_secret": "shared-secret-value-0123",
        "hmac_secret": "hmac-secret-value-0123",
        "standard_secret": "whsec_" + "a" * 32,
    }
    state = WebhookState(
        policy=SenderPolicy(**secrets),
        writer=_Writer(),  # type: ignore[arg-type]
        metrics=create_metrics(),
        max_body_bytes=1024,
        body_timeout=10.0,
    )
    endpoint = WebhookEndpoint(state)
    for shown in (repr(state), repr(endpoint), repr(state.policy)):
        for name, value in secrets.items():
            assert value not in shown, name
