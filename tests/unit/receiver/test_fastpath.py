"""The pre-rendered answers are byte for byte the JSONResponses they replace."""

from __future__ import annotations

import pytest
from starlette.responses import JSONResponse

from ledger.types import DeliveryOutcome
from receiver.errors import (
    BodyNotJSONError,
    BodyTimeoutError,
    IngestUnavailableError,
    InvalidEventError,
    ReceiverError,
    UnauthenticatedError,
)
from receiver.fastpath import NOT_ALLOWED, NOT_FOUND, SUCCESS, PreparedResponse, error_answer


def _same(answer: PreparedResponse, response: JSONResponse) -> None:
    assert answer.status == response.status_code
    assert answer.body == response.body
    assert list(answer.headers) == response.raw_headers


def test_every_outcome_has_its_success_answer() -> None:
    """Each outcome answers 200 with the public outcome; a conflicting copy reads duplicate."""
    for outcome in DeliveryOutcome:
        public = "duplicate" if outcome is DeliveryOutcome.CONFLICTING else outcome.value
        _same(SUCCESS[outcome], JSONResponse({"status": "ok", "outcome": public}))


def test_the_routing_errors_match_starlettes() -> None:
    """404 and 405 (with Allow: POST) are the bodies and headers the router's handler sent."""
    _same(
        NOT_FOUND,
        JSONResponse({"status": "error", "error": "not_found", "message": "Not Found"}, 404),
    )
    _same(
        NOT_ALLOWED,
        JSONResponse(
            {"status": "error", "error": "method_not_allowed", "message": "Method Not Allowed"},
            405,
            headers={"Allow": "POST"},
        ),
    )


@pytest.mark.parametrize(
    ("exc", "content", "headers"),
    [
        (
            UnauthenticatedError("webhook token is wrong"),
            {"status": "error", "error": "unauthenticated", "message": "webhook token is wrong"},
            None,
        ),
        (
            BodyNotJSONError("body is not JSON: JSONDecodeError"),
            {
                "status": "error",
                "error": "malformed_json",
                "message": "body is not JSON: JSONDecodeError",
            },
            None,
        ),
        (
            InvalidEventError("data.amount must be an integer number of kobo — é", "data.amount"),
            {
                "status": "error",
                "error": "invalid_event",
                "message": "data.amount must be an integer number of kobo — é",
                "field": "data.amount",
            },
            None,
        ),
        (
            IngestUnavailableError("retry later"),
            {"status": "error", "error": "unavailable", "message": "retry later"},
            {"Retry-After": "5"},
        ),
        (
            BodyTimeoutError("the body did not arrive within 10 s"),
            {
                "status": "error",
                "error": "body_timeout",
                "message": "the body did not arrive within 10 s",
            },
            {"Connection": "close"},
        ),
    ],
)
def test_errors_render_as_before(
    exc: ReceiverError, content: dict[str, object], headers: dict[str, str] | None
) -> None:
    """Error answers carry code, message, the field when there is one, Retry-After on 503 and
    Connection: close on 408."""
    _same(error_answer(exc), JSONResponse(content, exc.status_code, headers=headers))
