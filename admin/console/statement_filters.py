"""The query strings of the statements and periods pages, checked: an account by name, a
line state, Lagos days, a cursor. Every problem is a sentence for the page, which answers 400
with it (docs/rules.md Robustness rules: bad input is a 4xx, never a 500)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

from ledger.queries import MAX_ROW_ID, decode_cursor, encode_cursor
from ledger.statement_lines import CURSOR_KIND, LINE_STATES
from ledger.types import takes_text
from reconcile.reports.errors import PeriodError
from reconcile.reports.period import parse_day
from reconcile.statements.period import EARLIEST_DAY, LATEST_DAY

MAX_ACCOUNT_CHARS = 64
DEFAULT_STATE = "unmatched"


@dataclass
class Given:
    """The filters as given (for links and the form's values) and what is wrong with them."""

    values: dict[str, str | None]
    problems: list[str] = field(default_factory=list)
    since: dt.date | None = None
    until: dt.date | None = None


def _text(query: Mapping[str, str], name: str) -> str | None:
    return (query.get(name) or "").strip() or None


def _day(given: Given, name: str) -> dt.date | None:
    raw = given.values[name]
    if raw is None:
        return None
    try:
        day = parse_day(raw, option=name)
    except PeriodError:
        given.problems.append(f"“{name}” is a day like 2026-11-01.")
        return None
    if not EARLIEST_DAY <= day <= LATEST_DAY:
        given.problems.append(f"“{name}” is a day from {EARLIEST_DAY} to {LATEST_DAY}.")
        return None
    return day


def _account(given: Given) -> None:
    account = given.values["account"]
    if account is not None and (len(account) > MAX_ACCOUNT_CHARS or not takes_text(account)):
        given.problems.append(f"An account name has at most {MAX_ACCOUNT_CHARS} characters.")


def _range(given: Given) -> None:
    given.since, given.until = _day(given, "since"), _day(given, "until")
    if given.since and given.until and given.since > given.until:
        given.problems.append("“since” is a day on or before “until”.")


def line_filters(query: Mapping[str, str]) -> Given:
    """`/console/statements?account=&state=&since=&until=&cursor=`, or `?line=ID` (the page of
    every state that starts at that line, on its account)."""
    names = ("account", "state", "since", "until", "cursor", "line")
    given = Given({name: _text(query, name) for name in names})
    line = given.values["line"]
    if line is not None:
        if not (
            line.isascii() and line.isdigit() and len(line) <= 19 and 1 <= int(line) <= MAX_ROW_ID
        ):
            given.problems.append("A line is a statement line's id (a positive whole number).")
        else:
            given.values.update(
                state="all",
                cursor=encode_cursor(int(line) - 1, kind=CURSOR_KIND) if int(line) > 1 else None,
            )
    if given.values["state"] is None:
        given.values["state"] = DEFAULT_STATE
    _account(given)
    if given.values["state"] not in (*LINE_STATES, "all"):
        given.problems.append("The state is one of " + ", ".join((*LINE_STATES, "all")) + ".")
    _range(given)
    cursor = given.values["cursor"]
    if cursor is not None:
        try:
            decode_cursor(cursor, kind=CURSOR_KIND)
        except ValueError:
            given.problems.append("That page link is not valid.")
    return given


def period_filters(query: Mapping[str, str]) -> Given:
    """`/console/periods?account=&since=&until=` (and its downloads' `format`)."""
    given = Given({name: _text(query, name) for name in ("account", "since", "until")})
    _account(given)
    _range(given)
    return given
