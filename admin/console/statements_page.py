"""`/console/statements`: statement accounts, their imports, and their lines by state, with
the forms that work a line (confirm a suggestion, match, ignore, unmatch) and the import form
(docs/rules.md "Statements and period tie-out"; docs/console.md)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from admin.console.pages import PAGE_SIZE
from admin.console.render import page_link, render
from admin.console.statement_filters import Given, line_filters
from admin.shell import engine_of, in_thread
from ledger.db import read_session
from ledger.models import StatementLine
from ledger.statement_lines import DEFAULT_WALLET, LINE_STATES, LineQuery, find_account, list_lines
from ledger.statement_views import list_accounts, list_imports, state_totals
from statements.facts import IgnoreType
from statements.mapping import builtin_mappings

STATEMENTS = "/console/statements"
MATCH_TARGETS = ("transfer", "collection", "line")


def _chosen(accounts: list[Any], wanted: str | None) -> Any:
    """The account the page shows: the one asked for, else the wallet, else the first."""
    if wanted is not None:
        return next((a for a in accounts if a.name == wanted), None)
    named = {a.name: a for a in accounts}
    return named.get(DEFAULT_WALLET) or (accounts[0] if accounts else None)


async def statements_page(request: Request) -> Response:
    """The accounts, the chosen account's imports, and its lines in one state, a page at a
    time; 400 for filters that cannot be used, 404 for an account that does not exist."""
    given = line_filters(request.query_params)
    if given.problems:
        return _page(request, given, status=400)

    def load() -> dict[str, Any] | None:
        with read_session(engine_of(request)) as session:
            accounts = list_accounts(session)
            wanted = given.values["account"]
            if given.values["line"] is not None:
                # A link to one line (a finding's, a pair's other line): its account's page.
                found = session.get(StatementLine, int(given.values["line"] or 0))
                if found is None:
                    return None
                wanted = next((a.name for a in accounts if a.id == found.account_id), None)
            account = _chosen(accounts, wanted)
            if account is None:
                return None if given.values["account"] else {"accounts": accounts}
            state = given.values["state"]
            page = list_lines(
                session,
                LineQuery(
                    account_id=account.id,
                    state=None if state == "all" else state,
                    since=given.since,
                    until=given.until,
                    limit=PAGE_SIZE,
                    cursor=given.values["cursor"],
                ),
            )
            row = find_account(session, account.name)
            return {
                "accounts": accounts,
                "account": account,
                "imports": list_imports(session, account.id),
                "totals": state_totals(session, account.id, since=given.since, until=given.until),
                "items": page.items,
                "next_cursor": page.next_cursor,
                "wallet": row is not None and row.kind == "wallet",
            }

    loaded = await in_thread(load)
    if loaded is None:
        given.problems.append(
            "No statement line has that id."
            if given.values["line"]
            else "No statement account has that name."
        )
        return _page(request, given, status=404)
    return _page(request, given, **loaded)


def _page(
    request: Request,
    given: Given,
    *,
    status: int = 200,
    accounts: list[Any] | None = None,
    account: Any = None,
    imports: list[Any] | None = None,
    totals: dict[str, Any] | None = None,
    items: list[dict[str, Any]] | None = None,
    next_cursor: str | None = None,
    wallet: bool = False,
) -> Response:
    values = dict(given.values)
    values.pop("line", None)
    if account is not None:
        values["account"] = account.name
    here = page_link(STATEMENTS, values)
    tabs = [
        (state, page_link(STATEMENTS, values, state=state, cursor=None))
        for state in (*LINE_STATES, "all")
    ]
    return render(
        request,
        "statements.html",
        status=status,
        title="Statements",
        given=values,
        problems=given.problems,
        accounts=accounts or [],
        account=account,
        imports=imports or [],
        totals=totals or {},
        items=items or [],
        tabs=tabs,
        back=here,
        wallet=wallet,
        ignore_types=[str(t) for t in IgnoreType],
        match_targets=MATCH_TARGETS,
        mappings=builtin_mappings(),
        next_link=None
        if next_cursor is None
        else page_link(STATEMENTS, values, cursor=next_cursor),
        first_link=page_link(STATEMENTS, values, cursor=None) if values.get("cursor") else None,
    )
