"""A reversed transfer where operators look (PRODUCT.md: Reversals): the API's record and
`?status=reversed`, the console's status filter and the timeline; and the statement path's
entry point, `ledger.reversals.reverse_transfer`."""

from __future__ import annotations

import datetime as dt

import httpx
import pytest
from sqlalchemy import Engine, func, select

from ledger.db import read_session, write_session
from ledger.errors import NotReversibleError
from ledger.models import ProviderCheck, RelayEvent, Transfer
from ledger.reversals import reverse_transfer
from ledger.types import ReversalSource
from tests.integration.console.seed import T0, transfer
from tests.integration.receiver.conftest import ADMIN, StartReceiver

AUTH = {"authorization": f"Bearer {ADMIN}"}


def _confirm(engine: Engine, transfer_id: int) -> None:
    with write_session(engine) as session:
        row = session.get(Transfer, transfer_id)
        assert row is not None
        row.status, row.confirmed, row.confirmed_at = "successful", True, T0
        session.add(
            ProviderCheck(
                subject="transfer",
                subject_id=transfer_id,
                checked_at=T0 + dt.timedelta(hours=1),
                http_status=200,
                result="found",
                provider_status="failed",
            )
        )


def test_reverse_transfer_records_once_and_only_a_success(engine: Engine) -> None:
    """The statement path's call reverses a confirmed success once (a second call is False,
    no second event) and refuses a transfer that is not a confirmed success."""
    gone = transfer(engine, "ST-GONE", provider_reference="PRV-G")
    waiting = transfer(engine, "ST-WAIT")
    _confirm(engine, gone)
    at = T0 + dt.timedelta(days=2)
    with write_session(engine) as session:
        row = session.get(Transfer, gone)
        assert row is not None
        assert reverse_transfer(
            session, row, reason="credit NIP/REV PRV-G", source=ReversalSource.STATEMENT, now=at
        )
        assert not reverse_transfer(
            session, row, reason="again", source=ReversalSource.STATEMENT, now=at
        )
        pending = session.get(Transfer, waiting)
        assert pending is not None
        with pytest.raises(NotReversibleError, match="ST-WAIT is pending"):
            reverse_transfer(session, pending, reason="x", source=ReversalSource.STATEMENT, now=at)
    with read_session(engine) as session:
        row = session.get(Transfer, gone)
        assert row is not None
        assert (row.status, row.reversal_source, row.reversal_reason, row.reversed_at) == (
            "reversed",
            "statement",
            "credit NIP/REV PRV-G",
            at,
        )
        events = session.execute(
            select(func.count())
            .select_from(RelayEvent)
            .where(RelayEvent.type == "transfer.reversed")  # type: ignore[arg-type]
        ).scalar_one()
    assert events == 1


def test_reversed_transfers_in_the_api_and_the_console(
    engine: Engine, start_receiver: StartReceiver
) -> None:
    """`?status=reversed` lists only reversed transfers (API and console), the record carries
    the reversal, and the console's page shows it with the re-verification in the timeline."""
    gone = transfer(engine, "REV-CONSOLE", provider_reference="PRV-C")
    kept = transfer(engine, "OK-CONSOLE")
    _confirm(engine, gone)
    _confirm(engine, kept)
    with write_session(engine) as session:
        row = session.get(Transfer, gone)
        assert row is not None
        reverse_transfer(
            session,
            row,
            reason="Recalled by beneficiary bank",
            source=ReversalSource.LOOKUP,
            now=T0 + dt.timedelta(hours=1),
        )
    with start_receiver(admin_token=ADMIN) as url, httpx.Client(base_url=url, headers=AUTH) as http:
        listed = http.get("/api/transfers", params={"status": "reversed"}).json()["items"]
        assert [item["reference"] for item in listed] == ["REV-CONSOLE"]
        record = http.get("/api/transfers/PRV-C").json()
        assert (record["status"], record["confirmed"], record["reversal_source"]) == (
            "reversed",
            True,
            "lookup",
        )
        assert record["reversal_reason"] == "Recalled by beneficiary bank"
        reversed_at = (T0 + dt.timedelta(hours=1)).isoformat().replace("+00:00", "Z")
        assert record["reversed_at"] == reversed_at
        assert [f["kind"] for f in record["findings"]] == ["reversed_after_success"]
        assert http.get("/api/transfers", params={"status": "gone"}).status_code == 400
        page = http.get("/console/transfers", params={"status": "reversed"}).text
        assert "REV-CONSOLE" in page and "OK-CONSOLE" not in page
        assert '<option value="reversed" selected>' in page
        story = http.get("/console/transfers/REV-CONSOLE").text
        assert "reversed after success (found by lookup)" in story
        assert "re-verification provider check: failed" in story
        assert "confirmed successful by the provider" in story
