"""The demo's stand-in for a merchant's system: it receives payrecon's events and verifies them.

It does what docs/relay.md asks of a consumer — verify the Standard Webhooks signature with the
`standardwebhooks` library, drop a sequence already seen for the subject — and counts what came.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson
from standardwebhooks.webhooks import Webhook, WebhookVerificationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

PATH = "/payrecon-events"


@dataclass
class DemoConsumer:
    """Counts of what arrived: verified events by type, repeats and stale ones, refusals."""

    secret: str
    verified: Counter[str] = field(default_factory=Counter)
    stale: int = 0
    refused: int = 0
    _last: dict[tuple[str, str], int] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __repr__(self) -> str:
        return f"DemoConsumer(verified={sum(self.verified.values())}, stale={self.stale})"

    def app(self) -> Starlette:
        """The consumer's ASGI app; events are POSTed to PATH."""
        webhook = Webhook(self.secret)

        async def receive(request: Request) -> Response:
            body = await request.body()
            try:
                webhook.verify(body, dict(request.headers))
            except WebhookVerificationError:
                with self._lock:
                    self.refused += 1
                return Response(status_code=400)
            self.take(orjson.loads(body))
            return Response(status_code=204)

        return Starlette(routes=[Route(PATH, receive, methods=["POST"])])

    def take(self, event: dict[str, Any]) -> None:
        """Count a verified event, or a stale one when its subject already had that sequence."""
        data = event["data"]
        subject = (data.get("subject") or event["type"].split(".")[0], str(data["reference"]))
        with self._lock:
            if event["sequence"] <= self._last.get(subject, 0):
                self.stale += 1
                return
            self._last[subject] = event["sequence"]
            self.verified[event["type"]] += 1
