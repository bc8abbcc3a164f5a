"""The console's findings queue at scale: totals, counts, amount at stake, search, and working
everything a filter keeps after the count is confirmed."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import Engine, func, select

from admin.console.render import DONE_BANNERS, ERROR_BANNERS
from ledger.db import read_session, write_session
from ledger.models import Finding, Transfer
from ledger.operators import add_operator
from ledger.types import FindingKind, utcnow
from reconcile.advice import Figures, finance_advice
from tests.integration.console.seed import finding, transfer
from tests.support.apps import ADMIN, StartReceiver

AUTH = {"authorization": f"Bearer {ADMIN}"}
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
ACK_FORM = re.compile(r'<form class="inline" id="bulk-ack".*?</form>', re.S)
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


@pytest.fixture
def queue(engine: Engine, start_receiver: StartReceiver) -> Iterator[str]:
    """A receiver over five open stale findings (amounts 1,000 to 5,000 naira) and one orphan."""
    for i in range(5):
        finding(
            engine, transfer(engine, f"Q-{i}", amount=(i + 1) * 100_000), FindingKind.STALE_PENDING
        )
    finding(engine, transfer(engine, "OTHER-1", amount=7_700), FindingKind.ORPHAN_EVENT)
    with start_receiver(admin_token=ADMIN, insecure_cookies=True) as url:
        yield url


def _form(page: str) -> dict[str, str]:
    match = ACK_FORM.search(page)
    assert match is not None, "no bulk acknowledge form"
    return {html.unescape(k): html.unescape(v) for k, v in HIDDEN.findall(match.group(0))}


def _open(engine: Engine) -> int:
    with read_session(engine) as session:
        statement = (
            select(func.count())
            .select_from(Finding)
            .where(
                Finding.acknowledged_at.is_(None)  # type: ignore[union-attr]
            )
        )
        return int(session.execute(statement).scalar_one())


def test_the_queue_shows_totals_counts_and_amounts_at_stake(queue: str) -> None:
    """The queue says "1–6 of 6", has the per-kind strip, each finding's amount at stake in
    naira, and sorts largest first on request."""
    page = httpx.get(f"{queue}/console/findings", headers=AUTH).text
    by_amount = httpx.get(f"{queue}/console/findings?sort=amount", headers=AUTH).text
    assert "Findings 1–6 of 6" in page
    assert "Unresolved findings by kind and state" in page and ">stale_pending<" in page
    assert "₦5,000.00" in page
    assert by_amount.index("₦5,000.00") < by_amount.index("₦1,000.00") < by_amount.index("₦77.00")


def test_acknowledge_all_matching_after_confirming_the_count(engine: Engine, queue: str) -> None:
    """The form carries the count it shows; posted, every matching open finding is
    acknowledged and the page says so; the other kind stays open."""
    page = httpx.get(f"{queue}/console/findings?kind=stale_pending", headers=AUTH).text
    form = _form(page)
    assert form["expected_count"] == "5" and "Acknowledge all 5 matching" in page
    done = httpx.post(
        f"{queue}/console/findings/bulk", data={**form, "note": "provider outage"}, headers=AUTH
    )
    assert done.status_code == 303
    assert httpx.QueryParams(done.headers["location"].partition("?")[2])["done"] == (
        "bulk_acknowledged"
    )
    after = httpx.get(f"{queue}{done.headers['location']}", headers=AUTH).text
    assert html.escape(DONE_BANNERS["bulk_acknowledged"]) in after
    assert _open(engine) == 1


def test_a_count_that_changed_is_refused_with_the_new_count(engine: Engine, queue: str) -> None:
    """A finding raised after the page was shown makes the post change nothing; the page it
    returns to explains and offers the new count."""
    form = _form(httpx.get(f"{queue}/console/findings?kind=stale_pending", headers=AUTH).text)
    finding(engine, transfer(engine, "Q-LATE"), FindingKind.STALE_PENDING)
    refused = httpx.post(f"{queue}/console/findings/bulk", data={**form, "note": "x"}, headers=AUTH)
    location = refused.headers["location"]
    assert httpx.QueryParams(location.partition("?")[2])["error"] == "count_changed"
    again = httpx.get(f"{queue}{location}", headers=AUTH).text
    assert html.escape(ERROR_BANNERS["count_changed"]) in again
    assert _form(again)["expected_count"] == "6"
    assert _open(engine) == 7


def test_bad_bulk_forms_are_explained(engine: Engine, queue: str) -> None:
    """An unknown action, a count that is no number and a bad filter redirect with an error."""
    form = _form(httpx.get(f"{queue}/console/findings", headers=AUTH).text)
    for change in ({"action": "delete"}, {"expected_count": "lots"}, {"kind": "nope"}):
        answer = httpx.post(
            f"{queue}/console/findings/bulk", data={**form, "note": "x", **change}, headers=AUTH
        )
        assert answer.status_code == 303
        assert "error=bad_bulk_form" in answer.headers["location"], change
    assert _open(engine) == 6


def test_viewers_see_no_bulk_forms(engine: Engine, queue: str) -> None:
    """A viewer's queue has the totals but no bulk forms."""
    with write_session(engine) as session:
        _, token = add_operator(session, name="vic", role="viewer", now=utcnow())
    page = httpx.get(f"{queue}/console/findings", headers={"authorization": f"Bearer {token}"})
    assert "Findings 1–6 of 6" in page.text and ACK_FORM.search(page.text) is None


def test_search_finds_by_a_reference_prefix_in_any_case(queue: str) -> None:
    """The transfers search and the queue's reference box take a prefix in any case."""
    transfers = httpx.get(f"{queue}/console/transfers?q=q-", headers=AUTH).text
    found = httpx.get(f"{queue}/console/findings?reference=oth", headers=AUTH).text
    assert all(f">Q-{i}<" in transfers for i in range(5)) and "OTHER-1" not in transfers
    assert "Findings 1–1 of 1" in found and "OTHER-1" in found


def test_the_any_state_survives_links_and_bulk_actions(engine: Engine, queue: str) -> None:
    """With state "any" (`state=`), the order links and the page a bulk action returns to keep
    it, rather than falling back to the open findings."""
    page = httpx.get(f"{queue}/console/findings?state=", headers=AUTH).text
    form = _form(page)
    assert 'href="/console/findings?sort=amount&amp;state="' in page
    done = httpx.post(
        f"{queue}/console/findings/bulk", data={**form, "note": "all of them"}, headers=AUTH
    )
    query = httpx.QueryParams(done.headers["location"].partition("?")[2])
    assert query["done"] == "bulk_acknowledged" and query.get("state") == ""
    assert _open(engine) == 0


def test_each_finding_carries_the_advice_finance_reads(engine: Engine, queue: str) -> None:
    """Beside each finding the queue gives finance's advice (reconcile.advice.finance_advice):
    an amount mismatch told from the transfer's figures in naira, other kinds by kind, and
    none of the ops' commands."""
    mismatched = transfer(engine, "MIS-1", amount=500_000)
    with write_session(engine) as session:
        row = session.get(Transfer, mismatched)
        assert row is not None
        row.provider_amount = 450_000
        session.add(row)
    finding(engine, mismatched, FindingKind.AMOUNT_MISMATCH)
    page = html.unescape(httpx.get(f"{queue}/console/findings?state=", headers=AUTH).text)
    with read_session(engine) as session:
        stored = session.get(Transfer, mismatched)
        assert stored is not None
        expected = finance_advice(FindingKind.AMOUNT_MISMATCH, Figures.of(stored))
    assert "₦4,500.00 instead of ₦5,000.00" in expected and expected in page
    assert finance_advice(FindingKind.ORPHAN_EVENT) in page
    assert page.count(finance_advice(FindingKind.STALE_PENDING)) == 5
    assert "payrecon provider transaction" not in page
