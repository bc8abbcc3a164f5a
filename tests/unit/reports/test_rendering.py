"""Text and HTML renderings of a hand-built report (pure: no database, no network)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import json
import re

import jinja2
import pytest
from rich.console import Console

from reconcile.advice import Figures, what_to_do
from reconcile.reports.charts import bar_chart, hbar_chart
from reconcile.reports.html import PageForms, environment, render_html
from reconcile.reports.jsonout import dumps
from reconcile.reports.model import OpenFinding, Report
from reconcile.reports.naira import naira
from reconcile.reports.text import render_text
from tests.unit.reports.samples import sample_report

NOW = dt.datetime(2025, 3, 3, 12, tzinfo=dt.UTC)


def test_text_report_shows_every_section_in_naira() -> None:
    """Totals by status, fees on failed, wallet debit, findings, stale pending and days appear."""
    out = io.StringIO()
    render_text(sample_report(), Console(file=out, width=160), now=NOW)
    text = out.getvalue()
    for expected in (
        "Transfers by status",
        "₦1,234,567.89",
        "Fees charged on failed transfers",
        "₦25.00",
        "Wallet debit",
        "₦1,234,646.64",
        "Open findings by kind",
        "fee_mismatch",
        "Stale pending",
        "stuck-1",
        "2025-03-02",
        "₦234,567.89",
    ):
        assert expected in text, expected
    assert "unknown [bold]ref[/bold]" in text  # user text is not taken as rich markup


def test_html_is_self_contained() -> None:
    """No script, no external stylesheet, image or font: only the SVG namespace is a URL."""
    page = render_html(sample_report(), now=NOW)
    assert "<script" not in page.lower()
    urls = set(re.findall(r"https?://[^\s\"')]+", page))
    assert urls == {"http://www.w3.org/2000/svg"}
    assert "<style>" in page and "@media print" in page
    assert page.count("<svg") == 3


def test_html_shows_totals_and_escapes_what_it_did_not_write() -> None:
    """Naira totals appear; markup inside details and references is escaped."""
    page = render_html(sample_report(), now=NOW)
    assert naira(sample_report().wallet_debit) in page
    assert "quoted &lt;b&gt;10&lt;/b&gt;" in page and "<b>10</b>" not in page
    assert "ref-&lt;1&gt;" in page
    assert "ours, from the old system" in page


def test_forms_appear_only_on_the_served_page() -> None:
    """A saved file has no forms; the served page has a period picker and one ack form per open,
    unacknowledged finding."""
    saved = render_html(sample_report(), now=NOW)
    served = render_html(sample_report(), now=NOW, forms=PageForms("/reports"))
    assert "<form" not in saved
    assert served.count('class="ack"') == 1
    assert 'action="/reports/findings/1/ack"' in served
    assert '<input type="hidden" name="since" value="2025-03-01">' in served
    assert 'name="until" value="2025-03-02"' in served


def test_charts_scale_bars_to_the_largest_value() -> None:
    """The tallest bar fills the plot; an empty series says so; hbar rows follow the items."""
    svg = bar_chart(["a", "b"], [50, 100], title="t", fmt=str)
    heights = [float(h) for h in re.findall(r'<rect class="bar"[^>]*height="([\d.]+)"', svg)]
    assert heights[1] == 2 * heights[0] > 0
    assert "no transfers" in bar_chart([], [], title="t", fmt=str)
    kinds = hbar_chart([("x", 0), ("y", 3)], title="k")
    assert kinds.count("<rect") == 2 and ">3</text>" in kinds


def test_a_stale_limit_under_a_minute_is_said_in_seconds() -> None:
    """PAYRECON_STALE_AFTER=5 reads "pending over 5 s" in the HTML card and heading and the text."""
    report = dataclasses.replace(sample_report(), stale_after=5)
    page = render_html(report, now=NOW)
    out = io.StringIO()
    render_text(report, Console(file=out, width=160), now=NOW)
    assert page.count("pending over 5 s") == 2
    assert "pending over 5 s" in out.getvalue()
    assert "0 min" not in page + out.getvalue()


def test_acknowledge_forms_sit_on_their_own_row_under_the_finding() -> None:
    """Served, each open finding's form is in a row spanning the table, not in one of its cells."""
    page = render_html(sample_report(), now=NOW, forms=PageForms(base_path="/reports"))
    rows = re.findall(r"<tr[^>]*>.*?</tr>", page.split('class="findings"')[1].split("</table>")[0])
    with_forms = [row for row in rows if "<form" in row]
    assert with_forms
    for row in with_forms:
        assert row.startswith('<tr class="ack-row"><td colspan="7">')
        assert row.count("<td") == 1


WEBHOOK_FEE_DETAIL = "fees differ: quoted 1000, webhook 1050, provider 1000 kobo"


def _webhook_fee_report() -> Report:
    advice = what_to_do("fee_mismatch", Figures(fee=1000, webhook_fee=1050, provider_fee=1000))
    finding = OpenFinding(
        7,
        "fee_mismatch",
        WEBHOOK_FEE_DETAIL,
        "INV-7",
        "TRF_7",
        "successful",
        100_000,
        dt.datetime(2025, 3, 1, 9, tzinfo=dt.UTC),
        None,
        None,
        advice,
    )
    return dataclasses.replace(sample_report(), open_findings=[finding])


def test_text_and_html_show_finding_details_in_naira_json_keeps_kobo() -> None:
    """Details read ₦10.00/₦10.50 in the text report and the page; JSON keeps the kobo detail."""
    report = _webhook_fee_report()
    out = io.StringIO()
    render_text(report, Console(file=out, width=400), now=NOW)
    page = render_html(report, now=NOW, forms=PageForms("/reports"))
    naira_detail = "fees differ: quoted ₦10.00, webhook ₦10.50, provider ₦10.00"
    for rendered in (out.getvalue(), page):
        assert naira_detail in rendered
        assert "1050" not in rendered
        assert "webhook was wrong or tampered with" in rendered
        assert "claim the difference" not in rendered
    [listed] = json.loads(dumps(report.as_dict()))["open_findings"]
    assert listed["detail"] == WEBHOOK_FEE_DETAIL


def test_the_page_templates_escape_every_value_by_default() -> None:
    """A value a template prints is escaped unless marked safe, and a missing one is an error."""
    env = environment()
    assert env.from_string("{{ v }}").render(v="<b>&") == "&lt;b&gt;&amp;"
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing }}").render()
