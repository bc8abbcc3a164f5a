"""The statements and periods pages over HTTP on a real server: what each role sees, bad
query parameters answered 4xx (never a 500), downloads equal to the JSON, a matched line in
its transfer's timeline."""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from openpyxl import load_workbook
from sqlalchemy import Engine, select
from sqlmodel import Session, col

from ledger.db import write_session
from ledger.events.findings import raise_finding
from ledger.events.types import Subject
from ledger.models import AuditEntry, PeriodLock, StatementImport, StatementLine
from ledger.operators import add_operator
from ledger.types import FindingKind, utcnow
from reconcile.advice import finance_advice
from tests.integration.console.statement_seed import seed_statement
from tests.support.apps import ADMIN, StartReceiver

AUTH = {"authorization": f"Bearer {ADMIN}"}
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
NOVEMBER = {"account": "provider-wallet", "since": "2026-11-01", "until": "2026-11-30"}


@pytest.fixture
def served(
    engine: Engine, start_receiver: StartReceiver, tmp_path: Path
) -> Iterator[tuple[str, dict[str, int], dict[str, dict[str, str]]]]:
    """A receiver over a ledger with an imported wallet statement; a header per role."""
    ids = seed_statement(engine, tmp_path)
    headers = {"admin": AUTH}
    with write_session(engine) as session:
        for name, role in (("vera", "viewer"), ("finn", "finance")):
            _, token = add_operator(session, name=name, role=role, now=utcnow())
            headers[role] = {"authorization": f"Bearer {token}"}
    with start_receiver(admin_token=ADMIN, insecure_cookies=True) as url:
        yield url, ids, headers


def test_statements_page_shows_accounts_imports_and_lines_by_state(
    served: tuple[str, dict[str, int], dict[str, dict[str, str]]],
) -> None:
    """The wallet with its counts, its import, each state's lines with the total in naira;
    the hostile narration escaped; the menu links both pages."""
    url, ids, headers = served
    page = httpx.get(f"{url}/console/statements", headers=headers["viewer"])
    assert page.status_code == 200, page.text[:300]
    text = page.text
    assert "provider-wallet" in text and "wallet-november.csv" in text
    assert 'href="/console/statements"' in text and 'href="/console/periods"' in text
    assert "&lt;b&gt;SMS charges&lt;/b&gt;" in text and "<b>SMS" not in text
    assert "WAT" in text
    assert f'id="line-{ids["charge"]}"' in text
    assert "₦40.00" in text
    suggested = httpx.get(
        f"{url}/console/statements", params={"state": "suggested"}, headers=headers["viewer"]
    ).text
    assert f'id="line-{ids["suggested"]}"' in suggested and "inv-1003" in suggested
    assert "1 suggested line, ₦7,500.00 in all." in suggested
    matched = httpx.get(
        f"{url}/console/statements", params={"state": "matched"}, headers=headers["viewer"]
    ).text
    assert "TRF_D7731322DE471BE7" in matched and 'href="/console/transfers/inv-1001"' in matched


def test_statement_and_period_pages_answer_bad_parameters_with_4xx(
    served: tuple[str, dict[str, int], dict[str, dict[str, str]]],
) -> None:
    """Bad days, a reversed range, an unknown state, account or format, a huge or forged
    cursor, NUL and an overlong name: a 400 or 404 page saying what is wrong, never a 500."""
    url, _, headers = served
    huge = base64.urlsafe_b64encode(b"sl:" + b"9" * 30).decode()  # a row id past 2**63
    cases = [
        ("/console/statements", {"since": "2026-13-01"}, 400),
        ("/console/statements", {"until": "yesterday"}, 400),
        ("/console/statements", {"since": "2026-11-30", "until": "2026-11-01"}, 400),
        ("/console/statements", {"state": "<script>"}, 400),
        ("/console/statements", {"account": "nope"}, 404),
        ("/console/statements", {"account": "a\x00b"}, 400),
        ("/console/statements", {"account": "x" * 500}, 400),
        ("/console/statements", {"cursor": huge}, 400),
        ("/console/statements", {"cursor": "!!!"}, 400),
        ("/console/statements", {"since": "0001-01-02"}, 400),
        ("/console/statements", {"line": "x"}, 400),
        ("/console/statements", {"line": "9" * 30}, 400),
        ("/console/statements", {"line": "0"}, 400),
        ("/console/statements", {"line": "99999999"}, 404),
        ("/console/periods", {**NOVEMBER, "since": "2026-02-30"}, 400),
        ("/console/periods", {**NOVEMBER, "until": "9999-12-31"}, 400),
        ("/console/periods", {**NOVEMBER, "account": "nope"}, 404),
        ("/console/periods", {**NOVEMBER, "since": "2026-12-01"}, 400),
        ("/console/periods", {**NOVEMBER, "since": "0001-01-02"}, 400),
        ("/console/periods/download", {**NOVEMBER, "format": "exe"}, 400),
        ("/console/periods/download", {"format": "csv"}, 400),
        ("/console/periods/download", {**NOVEMBER, "account": "nope", "format": "csv"}, 404),
    ]
    for path, params, status in cases:
        answer = httpx.get(f"{url}{path}", params=params, headers=headers["viewer"])
        assert answer.status_code == status, (path, params, answer.status_code)
        assert 'role="alert"' in answer.text and "<script>" not in answer.text, (path, params)


def test_periods_page_ties_out_and_downloads_agree_with_the_json(
    served: tuple[str, dict[str, int], dict[str, dict[str, str]]],
) -> None:
    """The sentence, the figures and the lists; the CSV, XLSX and HTML downloads carry the
    JSON's figures; a viewer reads it all but gets no close form."""
    url, ids, headers = served
    page = httpx.get(f"{url}/console/periods", params=NOVEMBER, headers=headers["viewer"])
    assert page.status_code == 200
    assert "does not tie out" in page.text and "Unmatched lines" in page.text
    assert "Close period" not in page.text
    download = f"{url}/console/periods/download"
    data = httpx.get(download, params={**NOVEMBER, "format": "json"}, headers=headers["viewer"])
    assert data.status_code == 200 and "attachment" in data.headers["content-disposition"]
    tie = data.json()
    assert tie["tied_out"] is False and tie["account"] == "provider-wallet"
    assert {line["id"] for line in tie["unmatched_lines"]} >= {ids["charge"], ids["suggested"]} - {
        ids["suggested"]
    }
    sheet = httpx.get(download, params={**NOVEMBER, "format": "csv"}, headers=headers["viewer"])
    rows = list(csv.reader(io.StringIO(sheet.text)))
    figures = {row[1]: row[2] for row in rows if row and row[0] == "figures"}
    for key in ("opening_balance", "closing_balance", "credits", "debits", "residual"):
        assert int(figures[key]) == tie[key], key
        assert _naira(tie[key]) in page.text, key
    unmatched = [row for row in rows if row and row[0] == "unmatched_lines"]
    assert len(unmatched) == len(tie["unmatched_lines"])
    book = httpx.get(download, params={**NOVEMBER, "format": "xlsx"}, headers=headers["viewer"])
    workbook = load_workbook(io.BytesIO(book.content))
    assert "Summary" in workbook.sheetnames and "Unmatched lines" in workbook.sheetnames
    html_file = httpx.get(
        download, params={**NOVEMBER, "format": "html"}, headers=headers["viewer"]
    )
    assert "does not tie out" in html_file.text
    assert "default-src 'none'" in html_file.headers["content-security-policy"]
    assert json.loads(data.text) == tie


def _naira(kobo: int) -> str:
    whole, part = divmod(abs(kobo), 100)
    return f"{'-' if kobo < 0 else ''}₦{whole:,}.{part:02d}"


def test_a_matched_line_is_in_its_transfers_timeline(
    served: tuple[str, dict[str, int], dict[str, dict[str, str]]],
) -> None:
    """inv-1001's amount and fee lines appear in its timeline, with the account and day."""
    url, _, headers = served
    page = httpx.get(f"{url}/console/transfers/inv-1001", headers=headers["viewer"]).text
    assert page.count("provider-wallet 2026-11-02") == 2, page
    assert "statement line" in page and "payout_fee" in page
    collection = httpx.get(f"{url}/console/collections/order-77", headers=headers["viewer"]).text
    assert "provider-wallet 2026-11-03" in collection


def _csrf(url: str, headers: dict[str, str]) -> str:
    match = CSRF.search(httpx.get(f"{url}/console/statements", headers=headers).text)
    assert match is not None
    return match.group(1)


def _banner(answer: httpx.Response, kind: str) -> str | None:
    assert answer.status_code == 303, (answer.status_code, answer.text[:300])
    location = answer.headers["location"]
    assert location.startswith("/console/"), location
    code: str | None = httpx.QueryParams(location.partition("?")[2]).get(kind)
    return code


def _forms(ids: dict[str, int]) -> list[tuple[str, dict[str, str]]]:
    return [
        (f"/console/statements/lines/{ids['suggested']}/confirm", {}),
        (f"/console/statements/lines/{ids['charge']}/ignore", {"as": "charge", "note": "SMS"}),
        (f"/console/statements/lines/{ids['charge']}/unmatch", {}),
        (
            f"/console/statements/lines/{ids['charge']}/match",
            {"target": "transfer", "reference": "nope"},
        ),
        ("/console/periods/close", {**NOVEMBER, "lock": ""}),
    ]


def test_statement_forms_need_their_csrf_token_and_the_finance_role(
    engine: Engine, served: tuple[str, dict[str, int], dict[str, dict[str, str]]]
) -> None:
    """Every form (and the upload) is 403 without the token or with a forged one, and 403
    for a viewer with a valid one; a viewer's pages carry no form; finance's token works."""
    url, ids, headers = served
    viewer_page = httpx.get(
        f"{url}/console/statements", params={"state": "suggested"}, headers=headers["viewer"]
    ).text
    assert "Confirm" not in viewer_page and "Import a statement" not in viewer_page
    period = httpx.get(f"{url}/console/periods", params=NOVEMBER, headers=headers["viewer"])
    assert "Close and lock" not in period.text
    finance = headers["finance"]
    token = _csrf(url, finance)
    upload = {"file": ("x.csv", b"Date\n", "text/csv")}
    for path, form in [*_forms(ids), ("/console/statements/import", {})]:
        files = upload if path.endswith("/import") else None
        missing = httpx.post(f"{url}{path}", data=form, files=files, headers=finance)
        wrong = httpx.post(
            f"{url}{path}", data={"csrf_token": "forged", **form}, files=files, headers=finance
        )
        as_viewer = httpx.post(
            f"{url}{path}",
            data={"csrf_token": _csrf(url, headers["viewer"]), **form},
            files=files,
            headers=headers["viewer"],
        )
        assert (missing.status_code, wrong.status_code, as_viewer.status_code) == (403,) * 3, path
    # A token placed after the file is not read: the upload is refused before it streams.
    late = httpx.post(
        f"{url}/console/statements/import",
        content=_multipart([("file", "x.csv", b"abc"), ("csrf_token", None, token.encode())]),
        headers={**finance, "content-type": f"multipart/form-data; boundary={BOUNDARY}"},
    )
    assert late.status_code == 403
    finance_page = httpx.get(
        f"{url}/console/statements", params={"state": "suggested"}, headers=finance
    ).text
    assert "Confirm" in finance_page and "Import a statement" in finance_page


BOUNDARY = "----payrecon-test-boundary"


def _multipart(parts: list[tuple[str, str | None, bytes]]) -> bytes:
    body = b""
    for name, file_name, value in parts:
        disposition = f'form-data; name="{name}"'
        if file_name is not None:
            disposition += f'; filename="{file_name}"'
        body += f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + value
        body += b"\r\n"
    return body + f"--{BOUNDARY}--\r\n".encode()


def test_working_lines_by_form_is_audited_and_refusals_are_banners(
    engine: Engine, served: tuple[str, dict[str, int], dict[str, dict[str, str]]]
) -> None:
    """Confirm a suggestion, ignore a charge with its reason, unmatch it: each done and
    audited; an empty reason, an unknown reference, a matched line, a bad id, an unknown type
    each come back as their fixed banner with nothing changed."""
    url, ids, headers = served
    finance = headers["finance"]
    token = _csrf(url, finance)

    def post(path: str, **form: str) -> httpx.Response:
        return httpx.post(f"{url}{path}", data={"csrf_token": token, **form}, headers=finance)

    line = f"/console/statements/lines/{ids['charge']}"
    assert _banner(post(f"{line}/ignore", **{"as": "charge", "note": ""}), "error") == (
        "note_refused"
    )
    assert _banner(post(f"{line}/ignore", **{"as": "gift", "note": "x"}), "error") == (
        "bad_ignore_type"
    )
    assert _banner(post(f"{line}/match", target="transfer", reference="nope"), "error") == (
        "unknown_reference"
    )
    assert _banner(post(f"{line}/match", target="line", reference="x"), "error") == (
        "bad_reference"
    )
    assert _banner(post(f"{line}/match", target="planet", reference="x"), "error") == (
        "bad_reference"
    )
    assert _banner(post("/console/statements/lines/abc/confirm"), "error") == "bad_line_id"
    assert _banner(post("/console/statements/lines/99999999/confirm"), "error") == "line_missing"
    assert _banner(post(f"{line}/confirm"), "error") == "not_suggested"
    back = "/console/statements?state=suggested"
    confirmed = post(f"/console/statements/lines/{ids['suggested']}/confirm", back=back)
    assert _banner(confirmed, "done") == "confirmed"
    assert confirmed.headers["location"].startswith(back)
    assert _banner(post(f"/console/statements/lines/{ids['suggested']}/confirm"), "error") in (
        "line_not_open",
        "not_suggested",
    )
    assert _banner(post(f"{line}/ignore", **{"as": "charge", "note": "SMS alert"}), "done") == (
        "ignored"
    )
    assert _banner(post(f"{line}/match", target="transfer", reference="inv-1003"), "error") == (
        "line_not_open"
    )
    assert _banner(post(f"{line}/unmatch", back="//evil.example/x"), "done") == "unmatched"
    with Session(engine) as session:
        suggested = session.get(StatementLine, ids["suggested"])
        charge = session.get(StatementLine, ids["charge"])
        actions = [
            (row.operator, row.action, row.subject)
            for row in session.execute(select(AuditEntry).order_by(col(AuditEntry.id))).scalars()
            if row.action.startswith("statement.")
        ]
    assert suggested is not None and suggested.state == "matched"
    assert suggested.matched_by == "finn"
    assert charge is not None and charge.state == "unmatched"
    assert actions == [
        ("finn", "statement.match", f"statement_line:{ids['suggested']}"),
        ("finn", "statement.ignore", f"statement_line:{ids['charge']}"),
        ("finn", "statement.unmatch", f"statement_line:{ids['charge']}"),
    ]
    timeline = httpx.get(f"{url}/console/transfers/inv-1003", headers=finance).text
    assert "matched by finn" in timeline
    assert f"statement.match on statement_line:{ids['suggested']}" in timeline


def test_importing_through_the_console_streams_checks_and_lists_invalid_lines(
    engine: Engine,
    served: tuple[str, dict[str, int], dict[str, dict[str, str]]],
) -> None:
    """A bank CSV in a documented shape imports (its import row appears); a file with
    invalid lines stores nothing and lists each line with its number; an empty upload, a
    mapping path, a file of junk and an account of the other kind are banners."""
    url, _, headers = served
    finance = headers["finance"]
    token = _csrf(url, finance)
    sample = Path(__file__).resolve().parents[3] / "docs" / "statements" / "ng-debit-credit.csv"

    def upload(content: bytes, **fields: str) -> httpx.Response:
        parts: list[tuple[str, str | None, bytes]] = [("csrf_token", None, token.encode())]
        parts += [(k, None, v.encode()) for k, v in fields.items()]
        parts.append(("file", "bank.csv", content))
        return httpx.post(
            f"{url}/console/statements/import",
            content=_multipart(parts),
            headers={**finance, "content-type": f"multipart/form-data; boundary={BOUNDARY}"},
        )

    done = upload(sample.read_bytes(), account="gtb-main", kind="bank", mapping="ng-debit-credit")
    assert _banner(done, "done") == "imported"
    page = httpx.get(f"{url}{done.headers['location']}", headers=finance).text
    assert "bank.csv" in page and "gtb-main" in page
    broken = sample.read_text(encoding="utf-8").replace("05/11/2026", "31/02/2026")
    refused = upload(broken.encode(), account="gtb-main", kind="bank", mapping="ng-debit-credit")
    assert refused.status_code == 422 and "nothing was stored" in refused.text
    assert re.search(r'data-label="Line">1[0-9]<', refused.text), refused.text
    cases = [
        (upload(b"", account="gtb-main"), "no_file"),
        (upload(b"a,b\n", mapping="/etc/passwd"), "bad_import_options"),
        (upload(b"\x00\x01junk" * 10, format="csv"), "bad_statement_file"),
        (upload(sample.read_bytes(), kind="bank", mapping="ng-debit-credit"), "account_kind"),
    ]
    for answer, code in cases:
        assert _banner(answer, "error") == code, (code, answer.headers.get("location"))
    with Session(engine) as session:
        imports = session.execute(select(StatementImport)).scalars().all()
        audit = [row.action for row in session.execute(select(AuditEntry)).scalars()]
    assert [i.file_name for i in imports] == ["wallet-november.csv", "bank.csv"]
    assert audit.count("statement.import") == 1


def test_closing_and_locking_a_period_from_the_console(
    engine: Engine, served: tuple[str, dict[str, int], dict[str, dict[str, str]]]
) -> None:
    """Close without a lock records nothing; close and lock records the lock (shown on the
    page) and its audit row; a bad period or unknown account is a banner."""
    url, _, headers = served
    finance = headers["finance"]
    token = _csrf(url, finance)
    back = "/console/periods?" + str(httpx.QueryParams(NOVEMBER))

    def post(**form: str) -> httpx.Response:
        return httpx.post(
            f"{url}/console/periods/close",
            data={"csrf_token": token, "back": back, **form},
            headers=finance,
        )

    assert _banner(post(**NOVEMBER, lock=""), "done") == "period_closed"
    with Session(engine) as session:
        assert session.execute(select(PeriodLock)).first() is None
    locked = post(**NOVEMBER, lock="1")
    assert _banner(locked, "done") == "period_locked"
    page = httpx.get(f"{url}{locked.headers['location']}", headers=finance).text
    assert "Period closed and locked" in page and "Locked before:" in page and "by finn" in page
    assert _banner(post(**{**NOVEMBER, "since": "2026-12-01"}), "error") == "bad_period"
    assert _banner(post(**{**NOVEMBER, "since": "0001-01-02"}), "error") == "bad_period"
    assert _banner(post(**{**NOVEMBER, "until": "31/11/2026"}), "error") == "bad_period"
    assert _banner(post(**{**NOVEMBER, "account": "nope"}), "error") == "unknown_account"
    with Session(engine) as session:
        locks = session.execute(select(PeriodLock)).scalars().all()
        audit = [
            (row.operator, row.action)
            for row in session.execute(select(AuditEntry)).scalars()
            if row.action == "period.close"
        ]
    assert len(locks) == 1 and locks[0].locked_by == "finn"
    assert audit == [("finn", "period.close")]


def test_an_upload_over_the_limit_stops_and_stores_nothing(
    engine: Engine, start_receiver: StartReceiver, tmp_path: Path
) -> None:
    """A file past PAYRECON_STATEMENT_MAX_BYTES is refused as it streams, with its banner;
    no import is recorded."""
    seed_statement(engine, tmp_path)
    with start_receiver(admin_token=ADMIN, statement_max_bytes=2048) as url:
        token = _csrf(url, AUTH)
        body = _multipart(
            [("csrf_token", None, token.encode()), ("file", "big.csv", b"9" * 50_000)]
        )
        answer = httpx.post(
            f"{url}/console/statements/import",
            content=body,
            headers={**AUTH, "content-type": f"multipart/form-data; boundary={BOUNDARY}"},
        )
        assert _banner(answer, "error") == "file_too_large"
    with Session(engine) as session:
        assert len(session.execute(select(StatementImport)).scalars().all()) == 1


def test_a_line_has_a_link_of_its_own_and_its_findings_point_there(
    engine: Engine, served: tuple[str, dict[str, int], dict[str, dict[str, str]]]
) -> None:
    """`?line=ID` opens the page of every state starting at that line, on its account; a
    finding about a statement line links to it from the queue, with its advice."""
    url, ids, headers = served
    with write_session(engine) as session:
        raise_finding(
            session,
            subject=Subject.STATEMENT_LINE,
            subject_id=ids["charge"],
            kind=FindingKind.UNMATCHED_STATEMENT_LINE,
            detail="line still unmatched",
            now=utcnow(),
        )
    queue = httpx.get(f"{url}/console/findings", headers=headers["viewer"]).text
    link = f"/console/statements?line={ids['charge']}#line-{ids['charge']}"
    assert f'href="{link}"' in queue and f">line {ids['charge']}</a>" in queue
    # The advice beside it is finance's, as on the other pages (reconcile.advice).
    assert finance_advice(FindingKind.UNMATCHED_STATEMENT_LINE) in html.unescape(queue)
    page = httpx.get(f"{url}{link.partition('#')[0]}", headers=headers["viewer"])
    assert page.status_code == 200 and f'id="line-{ids["charge"]}"' in page.text
    assert f'id="line-{ids["funding"]}"' not in page.text  # the page starts at the line


def test_both_pages_on_a_ledger_without_statements(start_receiver: StartReceiver) -> None:
    """Before any import the pages say so (200), and a period asked for is a 404 page."""
    with start_receiver(admin_token=ADMIN) as url:
        statements = httpx.get(f"{url}/console/statements", headers=AUTH)
        periods = httpx.get(f"{url}/console/periods", headers=AUTH)
        asked = httpx.get(f"{url}/console/periods", params=NOVEMBER, headers=AUTH)
    assert statements.status_code == 200 and "No statement has been imported yet" in statements.text
    assert "Import a statement file" in statements.text
    assert periods.status_code == 200 and "No statement has been imported yet" in periods.text
    assert asked.status_code == 404
