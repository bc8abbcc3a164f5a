"""`/console/periods`: the tie-out of one account over Lagos days — the sentence, the figures,
the lists that explain a residual — its downloads (the renderings of `period close`,
reconcile.statements.render), and the form that closes (and locks) the period (docs/rules.md
"Period tie-out"; docs/console.md)."""

from __future__ import annotations

import datetime as dt
import io
import tempfile
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from admin.console.render import page_link, render
from admin.console.statement_filters import Given, period_filters
from admin.shell import engine_of, in_thread
from ledger.db import read_session
from ledger.statement_lines import DEFAULT_WALLET
from ledger.statement_views import list_accounts, period_locks
from ledger.types import utcnow
from reconcile.reports.period import lagos_day
from reconcile.statements.errors import AccountError
from reconcile.statements.period import period_tie_out
from reconcile.statements.render import (
    FIGURES,
    LISTS,
    render_csv,
    render_html,
    render_json,
    write_xlsx,
)
from statements.tieout import TieOut

PERIODS = "/console/periods"
DOWNLOADS = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "html": "text/html; charset=utf-8",
    "json": "application/json",
}
MONEY = frozenset(
    {"amount", "statement_amount", "ledger_amount", "difference", "expected_balance",
     "stated_balance"}
)  # fmt: skip


def _defaults(given: Given, accounts: list[Any]) -> None:
    """The wallet (or the first account) and this Lagos month so far, for the empty form."""
    names = [a.name for a in accounts]
    if given.values["account"] is None and names:
        given.values["account"] = DEFAULT_WALLET if DEFAULT_WALLET in names else names[0]
    today = lagos_day(utcnow())
    if given.values["since"] is None and given.values["until"] is None:
        given.values["since"] = today.replace(day=1).isoformat()
        given.values["until"] = today.isoformat()


def _complete(given: Given) -> bool:
    return bool(given.values["account"] and given.since and given.until)


async def _tie_out(request: Request, given: Given) -> tuple[TieOut, list[Any]] | None:
    """The tie-out asked for and the period's locks, or None when the account does not
    exist."""
    assert given.since is not None and given.until is not None
    account, since, until = given.values["account"] or "", given.since, given.until

    def load() -> tuple[TieOut, list[Any]] | None:
        with read_session(engine_of(request)) as session:
            try:
                result = period_tie_out(session, account, since, until)
            except AccountError:
                return None
            return result, period_locks(session, account, since, until)

    return await in_thread(load)


async def periods_page(request: Request) -> Response:
    """The picker, and once account, since and until are given the tie-out; 400 for days
    that cannot be used, 404 for an account that does not exist."""
    given = period_filters(request.query_params)

    def accounts() -> list[Any]:
        with read_session(engine_of(request)) as session:
            return list_accounts(session)

    known = await in_thread(accounts)
    if given.problems:
        return _page(request, given, known, None, status=400)
    asked = _complete(given)
    if not asked:
        _defaults(given, known)
        return _page(request, given, known, None)
    found = await _tie_out(request, given)
    if found is None:
        given.problems.append("No statement account has that name.")
        return _page(request, given, known, None, status=404)
    return _page(request, given, known, found[0], locks=found[1])


def _page(
    request: Request,
    given: Given,
    accounts: list[Any],
    result: TieOut | None,
    *,
    status: int = 200,
    locks: list[Any] | None = None,
) -> Response:
    values = dict(given.values)
    data: dict[str, Any] | None = None if result is None else result.to_json()
    downloads = (
        []
        if result is None
        else [
            (fmt.upper(), page_link(f"{PERIODS}/download", values, format=fmt)) for fmt in DOWNLOADS
        ]
    )
    return render(
        request,
        "periods.html",
        status=status,
        title="Periods",
        given=values,
        problems=given.problems,
        accounts=accounts,
        data=data,
        summary=None if result is None else result.summary(),
        explanations=[] if result is None else result.explanations(),
        figures=FIGURES,
        lists=LISTS,
        money=MONEY,
        downloads=downloads,
        back=page_link(PERIODS, values),
        locks=locks or [],
    )


async def download(request: Request) -> Response:
    """`/console/periods/download?account=&since=&until=&format=csv|xlsx|html|json`: the
    tie-out as `period close --format` writes it, as an attachment."""
    given = period_filters(request.query_params)
    fmt = (request.query_params.get("format") or "").strip()
    if fmt not in DOWNLOADS:
        given.problems.append("The format is one of " + ", ".join(DOWNLOADS) + ".")
    if not given.problems and not _complete(given):
        given.problems.append("Give the account, “since” and “until”.")
    if given.problems:
        return _page(request, given, [], None, status=400)
    found = await _tie_out(request, given)
    if found is None:
        given.problems.append("No statement account has that name.")
        return _page(request, given, [], None, status=404)
    result = found[0]
    body = await in_thread(lambda: _rendered(result, fmt))
    name = f"tie-out-{_safe(result.account)}-{result.since.isoformat()}-{result.until.isoformat()}"
    return Response(
        body,
        headers={
            "Content-Type": DOWNLOADS[fmt],
            "Content-Disposition": f'attachment; filename="{name}.{fmt}"',
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
            # The HTML download is a page of its own: nothing in it may run.
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
        },
    )


def _safe(name: str) -> str:
    """An account name fit for a file name (letters, digits, `-`, `_`, `.`)."""
    kept = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)
    return kept.strip(".") or "account"


def _rendered(result: TieOut, fmt: str) -> bytes:
    if fmt == "xlsx":
        with tempfile.TemporaryDirectory() as where:
            path = Path(where) / "tie-out.xlsx"
            write_xlsx(result, path)
            return path.read_bytes()
    if fmt == "html":
        return render_html(result).encode("utf-8")
    out = io.StringIO()
    (render_csv if fmt == "csv" else render_json)(result, out)
    return out.getvalue().encode("utf-8")


def period_days(given: Given) -> tuple[str, dt.date, dt.date]:
    """The account and days of a complete filter (for the close form's handler)."""
    assert given.since is not None and given.until is not None
    return given.values["account"] or "", given.since, given.until
