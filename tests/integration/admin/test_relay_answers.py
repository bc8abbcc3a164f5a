"""A consumer's answer is for admins (PRODUCT.md: Robustness rules): viewers and finance see
the status codes of the relay's attempts, not the first KiB of what the consumer said."""

from __future__ import annotations

import httpx
from sqlalchemy import Engine

from tests.integration.admin.conftest import Cast, bearer
from tests.integration.relay.conftest import add_transfer, emit, record_attempt
from tests.support import relay as support


def test_a_consumers_answer_is_shown_to_admins_only(cast: Cast, engine: Engine) -> None:
    """GET /api/events/{id}: an admin reads the first KiB of the answer, a viewer and finance
    get the status code with response_head null."""
    support.add_endpoint(engine, "http://10.0.0.7/hook")
    seeded = emit(engine, add_transfer(engine, "HEAD-1"), "HEAD-1")
    record_attempt(engine, seeded.delivery_ids[0], outcome="retry", status_code=500)

    def attempts(role: str) -> list[dict[str, object]]:
        answer = httpx.get(
            f"{cast.url}/api/events/{seeded.event_id}", headers=bearer(cast.tokens[role])
        )
        assert answer.status_code == 200
        return [a for d in answer.json()["deliveries"] for a in d["attempts"]]

    assert [(a["status_code"], a["response_head"]) for a in attempts("admin")] == [(500, "oops")]
    for role in ("viewer", "finance"):
        assert [(a["status_code"], a["response_head"]) for a in attempts(role)] == [(500, None)]
