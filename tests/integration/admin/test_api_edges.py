"""Edges of the admin API and the report page: out-of-range cursors and dates are 400 naming
the parameter, and a database that does not answer is 503, never a 500."""

from __future__ import annotations

import base64

import httpx
import pytest

from payrecon.app import create_app
from payrecon.settings import load_settings
from tests.support.apps import ADMIN
from tests.support.servers import free_port, running_server

AUTH = {"authorization": f"Bearer {ADMIN}"}
BROWSER = {**AUTH, "accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


def _cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


# (query of GET /api/transfers, the parameter the 400 must name)
BAD_LISTINGS = [
    ({"cursor": _cursor(f"t:{2**63}")}, "cursor"),
    ({"cursor": _cursor(f"t:{10**40}")}, "cursor"),
    ({"cursor": _cursor("t:²")}, "cursor"),
    ({"cursor": _cursor("t:-1")}, "cursor"),
    ({"since": "0001-01-01T00:00:00+14:00"}, "since"),
    ({"since": "9999-12-31T23:59:59-14:00"}, "since"),
    ({"since": "tomorrow"}, "since"),
    ({"limit": "١٠"}, "limit"),
    ({"limit": "1_0"}, "limit"),
    ({"limit": str(2**64)}, "limit"),
    ({"limit": "0"}, "limit"),
    ({"status": "paid"}, "status"),
]
BAD_PERIODS = [
    {"until": "9999-12-31"},
    {"since": "0001-01-01"},
    {"since": "0001-01-01T00:00:00+14:00"},
    {"since": "20240101xx"},
    {"since": "2025-02-01", "until": "2025-01-01"},
]


def test_bad_listing_parameters_are_400_naming_the_parameter(receiver_url: str) -> None:
    """A cursor id of 2^63 or more, a `since` outside years 1-9999 UTC, a page size in other
    digits: 400 with the parameter named (they were 500s)."""
    answers = [
        httpx.get(f"{receiver_url}/api/transfers", params=query, headers=AUTH)
        for query, _ in BAD_LISTINGS
    ]
    seen = [(a.status_code, a.json()["error"], a.json()["parameter"]) for a in answers]
    assert seen == [(400, "invalid_query", parameter) for _, parameter in BAD_LISTINGS]
    assert all(a.json()["message"].startswith(a.json()["parameter"]) for a in answers)


def test_a_reference_no_column_can_hold_is_404(receiver_url: str) -> None:
    """`GET /api/transfers/a%00b` is 404 on both databases (PostgreSQL refuses a NUL in a
    query, which made it a server error)."""
    answer = httpx.get(f"{receiver_url}/api/transfers/a%00b", headers=AUTH)
    assert (answer.status_code, answer.json()["error"]) == (404, "not_found")


def test_the_extreme_valid_values_still_list(receiver_url: str) -> None:
    """The largest cursor id, the earliest `since` and an `until` (not a listing filter) list."""
    queries = [
        {"cursor": _cursor(f"t:{2**63 - 1}")},
        {"since": "0001-01-01T00:00:00Z"},
        {"since": "9999-12-31T23:59:59Z", "until": "9999-12-31"},
    ]
    answers = [httpx.get(f"{receiver_url}/api/transfers", params=q, headers=AUTH) for q in queries]
    assert [a.status_code for a in answers] == [200, 200, 200]


def test_bad_report_periods_are_400_json_for_the_api(receiver_url: str) -> None:
    """`/api/reports/summary` and `/reports` (asked for JSON) answer a bad or out-of-range
    period with 400 invalid_period naming the parameter."""
    for path in ("/api/reports/summary", "/reports"):
        for query in BAD_PERIODS:
            answer = httpx.get(f"{receiver_url}{path}", params=query, headers=AUTH)
            assert answer.status_code == 400, (path, query, answer.text)
            assert answer.json()["error"] == "invalid_period"
            assert any(name in answer.json()["message"] for name in query)


def test_a_bad_period_gives_a_browser_an_html_page(receiver_url: str) -> None:
    """A browser asking `/reports` for a bad period gets a small HTML page with the reason and
    a way back, status 400, not raw JSON."""
    answer = httpx.get(f"{receiver_url}/reports", params={"until": "9999-12-31"}, headers=BROWSER)
    assert answer.status_code == 400
    assert answer.headers["content-type"].startswith("text/html")
    assert "until must be a day from 0001-01-02 to 9999-12-30" in answer.text
    assert 'href="/reports"' in answer.text
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]


def _closed_database(kind: str, tmp: str) -> str:
    if kind == "postgresql":
        # Nothing listens there: every connection is refused.
        return f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/test?connect_timeout=5"
    return f"sqlite:///{tmp}/no/such/directory/ledger.db"  # SQLite cannot open it


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_reads_answer_503_while_the_database_is_down(
    kind: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every admin read (and a registration) answers 503 database_unavailable with
    Retry-After, as the webhook does, while the database refuses connections; the report page
    tells a browser in HTML."""
    url_of_db = _closed_database(kind, str(tmp_path_factory.mktemp("down")))
    settings = load_settings(database_url=url_of_db, admin_token=ADMIN)
    with running_server(create_app(settings)) as url:
        answers = {
            "list": httpx.get(f"{url}/api/transfers", headers=AUTH),
            "one": httpx.get(f"{url}/api/transfers/R-1", headers=AUTH),
            "summary": httpx.get(f"{url}/api/reports/summary", headers=AUTH),
            "register": httpx.post(
                f"{url}/api/transfers/expected",
                json={"reference": "R-1", "amount": 100},
                headers=AUTH,
            ),
            "page": httpx.get(f"{url}/reports", headers=AUTH),
        }
        page = httpx.get(f"{url}/reports", headers=BROWSER)
    seen = {
        name: (a.status_code, a.json()["error"], a.headers.get("retry-after"))
        for name, a in answers.items()
    }
    assert seen == {name: (503, "database_unavailable", "5") for name in answers}
    assert page.status_code == 503 and page.headers["content-type"].startswith("text/html")
    assert "not answering" in page.text


def test_the_report_page_edges_render(receiver_url: str) -> None:
    """The first and last days a period can hold render the page and the summary (200)."""
    query = {"since": "0001-01-02", "until": "9999-12-30"}
    page = httpx.get(f"{receiver_url}/reports", params=query, headers=BROWSER)
    summary = httpx.get(f"{receiver_url}/api/reports/summary", params=query, headers=AUTH)
    assert (page.status_code, summary.status_code) == (200, 200)
    assert summary.json()["period"] == {"since": "0001-01-02", "until": "9999-12-30"}
