"""Pages written for the reader: advice in plain language and naira, failure reasons in naira,
no fee on a failed collection that was charged none, times marked with their zone."""

from __future__ import annotations

import csv
import io
import re

import httpx
from click.testing import CliRunner
from sqlalchemy import Engine

from admin.expected import parse_expected_collection, register_collection
from ledger.collections import find_collection
from ledger.db import write_session
from ledger.models import Transfer
from ledger.types import FindingKind, utcnow
from payrecon.cli import cli
from tests.integration.console.seed import finding, transfer
from tests.support.apps import ADMIN, StartReceiver, bearer

REASON = "Underpaid: expected 500000 kobo, received 400000 kobo"


def _seed(engine: Engine) -> None:
    """A transfer the provider paid short (₦4,900 of ₦5,000) with its amount_mismatch finding,
    and a failed collection whose quote of ₦50 was never charged."""
    tid = transfer(engine, "READ-T1", amount=500_000, provider_reference="PRV-READ-T1")
    finding(engine, tid, FindingKind.AMOUNT_MISMATCH, "amount 500000 vs provider 490000 kobo")
    now = utcnow()
    with write_session(engine) as session:
        row = session.get(Transfer, tid)
        assert row is not None
        row.provider_amount = 490_000
        register_collection(
            session, parse_expected_collection({"reference": "READ-C1", "amount": 500_000}), now=now
        )
        collection = find_collection(session, "READ-C1")
        assert collection is not None
        collection.status = "failed"
        collection.fee = 5_000
        collection.provider_fee = None
        collection.failure_reason = REASON


def test_pages_speak_naira_and_plain_advice(engine: Engine, start_receiver: StartReceiver) -> None:
    """The transfer page advises in naira without commands; the collection page shows its
    failure reason in naira and no fee charged; the list and the report files count no fee."""
    _seed(engine)
    with start_receiver(admin_token=ADMIN) as url:
        page = httpx.get(f"{url}/console/transfers/READ-T1", headers=bearer()).text
        collection = httpx.get(f"{url}/console/collections/READ-C1", headers=bearer()).text
        listing = httpx.get(f"{url}/console/collections?status=failed", headers=bearer()).text
        report = httpx.get(f"{url}/console/reports/download?format=csv", headers=bearer()).text
        html = httpx.get(f"{url}/reports", headers={**bearer(), "accept": "text/html"}).text
    advice = re.search(r"<strong>What to do:</strong> ([^<]*)</p>", page)
    assert advice is not None
    assert "₦4,900.00 instead of ₦5,000.00 (₦100.00 less)" in advice.group(1)
    assert "payrecon " not in advice.group(1) and "`" not in advice.group(1)
    assert "Underpaid: expected ₦5,000.00, received ₦4,000.00" in collection
    assert "kobo" not in collection
    assert "none charged (₦50.00 was quoted)" in collection
    assert '<td data-label="Fee" class="num">₦0.00</td>' in listing
    [row] = [r for r in csv.DictReader(io.StringIO(report)) if r["type"] == "collection"]
    assert (row["status"], row["fee"], row["quoted_fee"]) == ("failed", "0", "5000")
    # Every time on a page says its zone.
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} WAT", page)
    assert not re.search(r"\d{2}:\d{2}:\d{2}</", page)
    assert "times are Lagos time (WAT" in html
    assert "payrecon report --format" not in html
    assert "₦4,900.00 instead of ₦5,000.00" in html


def test_collection_show_writes_the_failure_reason_in_naira(
    database_url: str, engine: Engine
) -> None:
    """`collection show` (text) gives the provider's reason with naira; --json keeps it as is."""
    _seed(engine)
    env = {"PAYRECON_DATABASE_URL": database_url}
    text = CliRunner().invoke(cli, ["collection", "show", "READ-C1"], env=env)
    raw = CliRunner().invoke(cli, ["collection", "show", "READ-C1", "--json"], env=env)
    assert text.exit_code == 0, text.output
    assert "reason:     Underpaid: expected ₦5,000.00, received ₦4,000.00" in text.output
    assert REASON in raw.output
