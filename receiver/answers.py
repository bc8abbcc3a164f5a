"""The webhook endpoint's JSON answers, rendered once where they can be, as bare ASGI messages.

Byte for byte what Starlette's JSONResponse sent before the endpoint went bare: the same body
rendering and the same headers, in the same order, then `x-request-id`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from starlette.types import Send

from ledger.types import DeliveryOutcome
from receiver.errors import BodyTimeoutError, IngestUnavailableError, ReceiverError


@dataclass(frozen=True, slots=True)
class Answer:
    """A rendered JSON answer: status, body, and the headers other than `x-request-id`."""

    status: int
    body: bytes
    headers: tuple[tuple[bytes, bytes], ...]

    async def send(self, send: Send, request_id: str) -> None:
        """Send this answer, tagged with the request's id."""
        await send(
            {
                "type": "http.response.start",
                "status": self.status,
                "headers": [*self.headers, (b"x-request-id", request_id.encode())],
            }
        )
        await send({"type": "http.response.body", "body": self.body})


def render(status: int, content: dict[str, object], extra: dict[str, str] | None = None) -> Answer:
    """`content` as JSONResponse(content, status, extra) would have sent it."""
    body = json.dumps(
        content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode("utf-8")
    headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (extra or {}).items()]
    headers += [
        (b"content-length", str(len(body)).encode()),
        (b"content-type", b"application/json"),
    ]
    return Answer(status, body, tuple(headers))


def error_answer(exc: ReceiverError) -> Answer:
    """A clear JSON error for a receiver error."""
    content: dict[str, object] = {"status": "error", "error": exc.code, "message": exc.message}
    field = getattr(exc, "field", None)
    if field:
        content["field"] = field
    extra: dict[str, str] | None = None
    if isinstance(exc, IngestUnavailableError):
        extra = {"Retry-After": "5"}
    elif isinstance(exc, BodyTimeoutError):
        # The rest of a stalled body may never come: close rather than wait to read past it.
        extra = {"Connection": "close"}
    return render(exc.status_code, content, extra)


def public_outcome(outcome: DeliveryOutcome) -> str:
    """The outcome the sender is told (PRODUCT.md names three)."""
    # A conflicting copy is not applied, so it is a duplicate to the sender (the conflict is a
    # finding for ops, not the provider's problem).
    if outcome is DeliveryOutcome.CONFLICTING:
        return DeliveryOutcome.DUPLICATE.value
    return outcome.value


# The constant answers: 200 for each outcome, and the two routing errors.
SUCCESS = {
    outcome: render(200, {"status": "ok", "outcome": public_outcome(outcome)})
    for outcome in DeliveryOutcome
}
NOT_FOUND = render(404, {"status": "error", "error": "not_found", "message": "Not Found"})
NOT_ALLOWED = render(
    405,
    {"status": "error", "error": "method_not_allowed", "message": "Method Not Allowed"},
    {"Allow": "POST"},
)
