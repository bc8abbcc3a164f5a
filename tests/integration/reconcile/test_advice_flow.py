"""From a real check to what people read: advice per case, naira details, in alerts and reports."""

from __future__ import annotations

import asyncio
import datetime as dt
import io
from typing import Any

from rich.console import Console
from sqlalchemy import Engine

from ledger.db import read_session, write_session
from ledger.queries import ExpectedTransfer, register_expected
from payrecon.settings import load_settings
from provider.models import Transaction
from reconcile.poller import run_pass
from reconcile.reports.findings import list_findings
from reconcile.reports.html import PageForms, render_html
from reconcile.reports.summary import compute_report
from reconcile.reports.text import render_text
from tests.integration.reconcile.helpers import FakeLookup, apply_webhook

T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
CLAIM = "claim the difference from the provider"
TAMPERED = "webhook was wrong or tampered with"
MOVED = "provider moved a different amount"

# reference: (expected amount, quoted fee, webhook (amount, fee) or None, provider (amount, fee))
CASES: dict[str, tuple[int, int, tuple[int, int] | None, tuple[int, int]]] = {
    "FEE-WEBHOOK": (100_000, 1000, (100_000, 1050), (100_000, 1000)),
    "FEE-PROVIDER": (100_000, 1000, None, (100_000, 1050)),
    "FEE-CONTRACT": (100_000, 2550, None, (100_000, 2550)),
    "AMOUNT-WEBHOOK": (100_000, 1000, (105_000, 1000), (100_000, 1000)),
    "AMOUNT-PROVIDER": (100_000, 1000, None, (100_100, 1000)),
}
# reference: (kind, words the advice must hold, words it must not)
EXPECTED = {
    "FEE-WEBHOOK": ("fee_mismatch", [TAMPERED, "Nothing to claim"], [CLAIM]),
    "FEE-PROVIDER": ("fee_mismatch", ["more than it quoted", CLAIM], [TAMPERED]),
    "FEE-CONTRACT": ("fee_mismatch", ["PAYRECON_FEE_SCHEDULE", CLAIM], [TAMPERED, "quoted"]),
    "AMOUNT-WEBHOOK": ("amount_mismatch", [TAMPERED, "no money is missing"], [MOVED]),
    "AMOUNT-PROVIDER": ("amount_mismatch", [MOVED], [TAMPERED]),
}
NAIRA_DETAILS = {
    "FEE-WEBHOOK": "fees differ: quoted ₦10.00, webhook ₦10.50, provider ₦10.00",
    "FEE-CONTRACT": "provider fee ₦25.50 exceeds the contract fee ₦25.00",
    "AMOUNT-WEBHOOK": "expected ₦1,000.00; webhook amount ₦1,050.00",
}


class RecordingSink:
    """An alert sink keeping every (title, body) it is given."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def send(self, title: str, body: str) -> str | None:
        """Keep the alert; never fails."""
        self.sent.append((title, body))
        return None


def _checked_ledger(engine: Engine) -> RecordingSink:
    with write_session(engine) as session:
        for ref, (amount, fee, _, _) in CASES.items():
            register_expected(session, ExpectedTransfer(ref, amount, fee), now=T0)
    for ref, (_, _, webhook, _) in CASES.items():
        if webhook is not None:
            amount, fee = webhook
            apply_webhook(
                engine,
                ref,
                status="successful",
                amount=amount,
                fee=fee,
                failure_reason=None,
                now=T0,
            )
    answers: dict[str, Any] = {
        ref: Transaction(
            reference=f"TRF_{ref}",
            merchant_reference=ref,
            type="transfer",
            amount=provider[0],
            fee=provider[1],
            status="successful",
        )  # type: ignore[arg-type]
        for ref, (_, _, _, provider) in CASES.items()
    }
    settings = load_settings(
        database_url="sqlite://", check_backoff=0, fee_schedule="0-:2500", stale_after=10**6
    )
    sink = RecordingSink()
    now = T0 + dt.timedelta(seconds=1)
    asyncio.run(run_pass(engine, FakeLookup(answers), settings, now=now, sink=sink))
    return sink


def _check_advice(ref: str, advice: str) -> None:
    _, present, absent = EXPECTED[ref]
    for words in present:
        assert words in advice, (ref, words, advice)
    for words in absent:
        assert words not in advice, (ref, words, advice)


def test_alerts_give_per_case_advice_and_naira_details(engine: Engine) -> None:
    """Each alert's advice names the source that differs, and its detail is in naira."""
    sink = _checked_ledger(engine)
    bodies = {title.split(" on transfer ")[1]: body for title, body in sink.sent}
    assert set(bodies) == set(CASES)
    for ref, body in bodies.items():
        assert f"What happened: {EXPECTED[ref][0].replace('_', ' ')}" in body
        _check_advice(ref, body.split("What to do: ")[1])
        assert "kobo" not in body
    for ref, detail in NAIRA_DETAILS.items():
        assert detail in bodies[ref]


def test_reports_give_per_case_advice_naira_in_text_and_html_kobo_in_json(engine: Engine) -> None:
    """The report's JSON keeps kobo details; text and HTML show them in naira; advice per case."""
    _checked_ledger(engine)
    with read_session(engine) as session:
        report = compute_report(session, now=T0 + dt.timedelta(seconds=2))
        listed = {item["reference"]: item for item in list_findings(session, open_only=True)}
    found = {finding.reference: finding for finding in report.open_findings}
    assert set(found) == set(CASES) == set(listed)
    for ref, finding in found.items():
        assert finding.kind == EXPECTED[ref][0]
        _check_advice(ref, finding.what_to_do)
        assert listed[ref]["what_to_do"] == finding.what_to_do  # `findings list` agrees
        assert listed[ref]["detail"] == finding.detail
    as_json = {item["reference"]: item for item in report.as_dict()["open_findings"]}
    assert as_json["FEE-WEBHOOK"]["detail"] == (
        "fees differ: quoted 1000, webhook 1050, provider 1000 kobo"
    )
    out = io.StringIO()
    render_text(report, Console(file=out, width=600))
    page = render_html(report, forms=PageForms("/reports"))
    for rendered in (out.getvalue(), page):
        for detail in NAIRA_DETAILS.values():
            assert detail in rendered
        assert " kobo" not in rendered
