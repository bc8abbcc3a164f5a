"""A note appears once in a transfer's or collection's timeline, however it was written."""

from __future__ import annotations

import httpx
from sqlalchemy import Engine

from ledger.db import read_session
from ledger.queries import find_transfer
from ledger.timeline_sources import transfer_timeline
from ledger.types import FindingKind
from tests.integration.console.seed import finding, transfer
from tests.support.apps import ADMIN

AUTH = {"authorization": f"Bearer {ADMIN}"}


def test_a_note_and_an_acknowledgement_note_each_appear_once(
    engine: Engine, receiver_url: str
) -> None:
    """A note (once a note entry and an audit row) and an acknowledgement's note (once also the
    acknowledged entry) each show their text in exactly one timeline entry, and the operator's
    actions still appear."""
    fid = finding(engine, transfer(engine, "NOTE-ONCE"), FindingKind.AMOUNT_MISMATCH)
    noted = httpx.post(
        f"{receiver_url}/api/findings/{fid}/notes", json={"note": "called the bank"}, headers=AUTH
    )
    acked = httpx.post(
        f"{receiver_url}/api/findings/{fid}/ack", json={"note": "refunded on 3 March"}, headers=AUTH
    )
    assert (noted.status_code, acked.status_code) == (201, 200)
    with read_session(engine) as session:
        row = find_transfer(session, "NOTE-ONCE")
        assert row is not None
        entries = transfer_timeline(session, row)
    for text in ("called the bank", "refunded on 3 March"):
        showing = [e for e in entries if text in e.detail or text in e.title]
        assert len(showing) == 1, showing
        assert showing[0].actor == "admin"
    titles = [e.title for e in entries]
    assert f"finding.note on finding:{fid}" in titles
    assert f"finding.ack on finding:{fid}" in titles
    assert any(t.endswith("acknowledged") for t in titles)
