"""The period tie-out computed in the database (docs/rules.md "Period tie-out";
docs/statements.md "Closing a period"): sums by state, the balance chain's breaks and the
subjects whose lines do not show exactly what the ledger expects, each in one query, so a
month of millions of lines is never loaded. Only the exceptions come back row by row — the
unmatched and suggested lines, and the subjects the pure `statements.tieout.tie_subject` then
ties out one by one — which makes the result the pure `statements.tieout.tie_out`'s
(tests/integration/statements/test_tieout_sql.py checks the two against each other).

A subject is *clean* when every line matched to it that the tie-out sees is dated in the
period, plays a distinct role, shows exactly the ledger's figure for that role in its
direction, and the roles are exactly the movements the ledger expects of it
(`statements.expected.expected_movements`, restated in SQL below): then it explains nothing
and its share of the ledger's movement is its lines' own sum.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Date, TextClause, bindparam, text
from sqlmodel import Session

from ledger.types import UTCDateTime
from reconcile.reports.period import lagos_midnight_utc

# A line dated this far outside the period can still show a movement of one of its subjects
# (a payout made on the 31st and debited on the 1st).
BOUNDARY = dt.timedelta(days=7)

_SIGNED = "CASE WHEN direction = 'credit' THEN amount ELSE -amount END"
_IN_PERIOD = "account_id = :account AND date BETWEEN :since AND :until"
_TO_SUBJECT = "state = 'matched' AND (transfer_id IS NOT NULL OR collection_id IS NOT NULL)"
_TO_LINE = (
    "state = 'matched' AND transfer_id IS NULL AND collection_id IS NULL"
    " AND other_line_id IS NOT NULL"
)
# What `statements.tieout.tie_out` lists as unmatched: unmatched lines, and matched ones that
# point at nothing.
_UNMATCHED = (
    "(state = 'unmatched' OR (state = 'matched' AND transfer_id IS NULL"
    " AND collection_id IS NULL AND other_line_id IS NULL))"
)
_ORDER = "date, import_id, position"

# One pass: the sums, with no window, so PostgreSQL can share it among parallel workers.
# The balance chain is checked apart, between neighbours in statement order, through the
# statement-order index alone: on PostgreSQL a window `lag` (`_CHAIN_BREAKS`: in this pass, it
# made every row carry all the columns through the window, and the pass serial); SQLite
# copies every row of a window's partition into a temporary table (~3.5 µs a line), so there
# the chain is walked on the driver's cursor (`_chain_breaks`).
_SUMS = f"""
SELECT count(*),
    coalesce(sum(CASE WHEN direction = 'credit' THEN amount ELSE 0 END), 0),
    coalesce(sum(CASE WHEN direction = 'debit' THEN amount ELSE 0 END), 0),
    coalesce(sum(CASE WHEN state = 'ignored' OR ({_TO_LINE}) THEN signed ELSE 0 END), 0),
    coalesce(sum(CASE WHEN {_TO_SUBJECT} THEN signed ELSE 0 END), 0),
    coalesce(sum(CASE WHEN {_TO_SUBJECT} OR ({_TO_LINE}) THEN 1 ELSE 0 END), 0),
    coalesce(sum(CASE WHEN {_TO_SUBJECT} OR ({_TO_LINE}) THEN amount ELSE 0 END), 0),
    count(balance),
    count(collection_id),
    count(transfer_id),
    count(CASE WHEN state = 'matched' THEN collection_id END),
    count(CASE WHEN state = 'matched' THEN transfer_id END)
FROM (
    SELECT direction, amount, state, transfer_id, collection_id, other_line_id, balance,
        {_SIGNED} AS signed
    FROM statement_line WHERE {_IN_PERIOD}
) AS o
"""  # noqa: S608 (constants only)

# The lines stating a balance other than the previous line's plus their own amount, when
# every line states one; the breaks are listed (`_BREAKS`) only when there are.
_CHAIN_BREAKS = f"""
SELECT count(*) FROM (
    SELECT balance, {_SIGNED} AS signed, lag(balance) OVER (ORDER BY {_ORDER}) AS previous
    FROM statement_line WHERE {_IN_PERIOD}
) AS o
WHERE balance <> previous + signed
"""  # noqa: S608 (constants only)

# The chain in statement order, read from ix_statement_line_account_date alone (it holds
# the balance and the signed amount's columns, migration 0016).
_CHAIN = (
    f"SELECT balance, {_SIGNED} FROM statement_line WHERE {_IN_PERIOD}"  # noqa: S608
    f" ORDER BY {_ORDER}"
)

# The breaks between neighbours that both state a balance.
_BREAKS = f"""
SELECT previous, id, previous_balance + signed, balance FROM (
    SELECT id, balance, {_SIGNED} AS signed,
        lag(id) OVER w AS previous, lag(balance) OVER w AS previous_balance
    FROM statement_line WHERE {_IN_PERIOD}
    WINDOW w AS (ORDER BY {_ORDER})
) AS o
WHERE balance <> previous_balance + signed
"""  # noqa: S608 (constants only)

_END_LINE = (
    f"SELECT id, balance, {_SIGNED} FROM statement_line WHERE {_IN_PERIOD}"  # noqa: S608
    " ORDER BY date {0}, import_id {0}, position {0} LIMIT 1"
)

# k = balance − (running sum of the movements): constant along an unbroken chain, so each
# change of k between two lines stating a balance is a break (`statements.tieout.chain_gaps`);
# the opening balance is k before the first line. The last line stating a balance is returned
# too, for the closing balance.
_GAPS = f"""
WITH o AS (
    SELECT id, balance,
        sum({_SIGNED}) OVER w AS run,
        lag(id) OVER w AS previous,
        row_number() OVER w AS n
    FROM statement_line WHERE {_IN_PERIOD}
    WINDOW w AS (ORDER BY {_ORDER} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
), b AS (
    SELECT id, previous, balance, run, balance - run AS k,
        lag(balance - run, 1, CAST(:opening AS BIGINT)) OVER (ORDER BY n) AS prior_k,
        lead(n) OVER (ORDER BY n) AS later
    FROM o WHERE balance IS NOT NULL
)
SELECT previous, id, prior_k + run, balance, k, CASE WHEN later IS NULL THEN 1 ELSE 0 END
FROM b
WHERE k <> prior_k OR later IS NULL
"""  # noqa: S608 (constants only)

_STATUS = (
    "CASE WHEN {table}.status IN ('successful', 'failed', 'reversed') THEN {table}.status"
    " ELSE 'pending' END"
)
# The period's transfers, and its collections: dated the day they were paid (one paid in the
# period was created before: `collections_since`).
_TRANSFERS_IN_PERIOD = "t.created_at >= :start AND t.created_at < :end"
_COLLECTIONS_IN_PERIOD = (
    "t.created_at >= :collections_since AND t.created_at < :end"
    " AND coalesce(t.paid_at, t.confirmed_at, t.created_at) >= :start"
    " AND coalesce(t.paid_at, t.confirmed_at, t.created_at) < :end"
)

# The roles a subject's lines may play, each a bit (`roles` below sums them), with the
# direction and the figure (`statements.expected.ledger_figure`) a line of it shows.
_TRANSFER_ROLES = {
    "payout": (1, "debit", "{a} + {f}"),
    "payout_amount": (2, "debit", "{a}"),
    "payout_fee": (4, "debit", "{f}"),
    "refund": (8, "credit", "{a}"),
    "reversal": (16, "credit", "{a}"),
}
_COLLECTION_ROLES = {"collection_credit": (1, "credit", "{net}")}

# What the matcher knows of each of the period's subjects (`reconcile.statements.facts`:
# transfer_subject, collection_subject), as expressions of its row `t`: a transfer's amount,
# fee charged and status; a collection's net credit and status.
_TRANSFER_FIGURES = {
    "a": "CASE WHEN t.amount IS NOT NULL THEN t.amount ELSE coalesce(t.provider_amount, 0) END",
    "f": (
        "CASE WHEN t.initiation = 'rejected' THEN 0"
        " ELSE coalesce(t.provider_fee, t.webhook_fee, t.fee, 0) END"
    ),
    "s": _STATUS.format(table="t"),
}
_COLLECTION_FIGURES = {
    "net": "coalesce(t.amount_paid, t.amount) - coalesce(t.provider_fee, t.fee, 0)",
    "s": _STATUS.format(table="t"),
}

# `expected_movements` for a transfer, over its lines `n` (all in the period: `bad` is 0) and
# the sum of their roles' bits `roles`: nothing while pending, nor for a failed one charged
# no fee and no line; else the payout in two lines (amount, fee: only once one of them is
# there) or in one, then a failed transfer's refund, a reversed one's reversal; never a
# movement of 0 kobo. A set of roles is exactly the lines' when their bits add up to it and
# there are as many lines as it has roles: n powers of two add up to a number with n bits set
# only when no two are equal.
_AFTER = "CASE WHEN a > 0 AND s = 'failed' THEN 8 WHEN a > 0 AND s = 'reversed' THEN 16 ELSE 0 END"
_AFTER_LINES = "CASE WHEN a > 0 AND s IN ('failed', 'reversed') THEN 1 ELSE 0 END"
_TRANSFER_CLEAN = f"""
    bad = 0
    AND CASE WHEN s = 'pending' OR (s = 'failed' AND f <= 0 AND n = 0) THEN n = 0
        ELSE ((a > 0 OR f > 0)
                AND roles = (CASE WHEN a > 0 THEN 2 ELSE 0 END)
                    + (CASE WHEN f > 0 THEN 4 ELSE 0 END) + {_AFTER}
                AND n = (CASE WHEN a > 0 THEN 1 ELSE 0 END)
                    + (CASE WHEN f > 0 THEN 1 ELSE 0 END) + {_AFTER_LINES})
            OR (roles = (CASE WHEN a + f > 0 THEN 1 ELSE 0 END) + {_AFTER}
                AND n = (CASE WHEN a + f > 0 THEN 1 ELSE 0 END) + {_AFTER_LINES})
    END
"""
_COLLECTION_CLEAN = """
    bad = 0 AND n = (CASE WHEN s = 'successful' AND net > 0 THEN 1 ELSE 0 END)
"""


def _unclean_sql(
    table: str,
    period: str,
    column: str,
    roles: dict[str, tuple[int, str, str]],
    figures: dict[str, str],
) -> str:
    # Each of the period's subjects (`table` rows in `period`) joined to its lines the
    # tie-out sees, found through the line's subject index ({index}: SQLite's planner would
    # rather walk the date index), and grouped by the subject's row — by (created_at, id) for
    # a transfer, the order of the creation-time index the period is read through, so SQLite
    # needs no sort; PostgreSQL groups by the primary key alone. Per subject: its lines in
    # the period `n`, those dated outside it or not showing their role's figure in its
    # direction `bad` (a line without a role among them), and the sum of their roles' bits
    # `roles` — three aggregates a line, the query's cost.
    # One row comes back: how many matched lines of the period name one of the period's
    # subjects — when that is every line of the period naming a subject of this kind, no line
    # names one from outside and `_REFERENCED` need not run — and the ids of the subjects
    # that are not clean, joined with commas ({ids}: the dialect's string aggregate).
    exact = " OR ".join(
        f"(l.role = '{role}' AND l.direction = '{direction}'"
        f" AND l.amount = {figure.format(**figures)})"
        for role, (_, direction, figure) in roles.items()
    )
    bits = " ".join(f"WHEN '{role}' THEN {bit}" for role, (bit, _, _) in roles.items())
    group = "t.created_at, t.id" if table == "transfer" else "t.id"
    return f"""
SELECT coalesce(sum(n), 0), {{ids}} FROM (
    SELECT t.id AS id, {", ".join(f"{value} AS {name}" for name, value in figures.items())},
        count(CASE WHEN l.date BETWEEN :since AND :until THEN 1 END) AS n,
        count(
            CASE WHEN l.{column} IS NULL THEN NULL
            WHEN l.date BETWEEN :since AND :until AND ({exact}) THEN NULL ELSE 1 END
        ) AS bad,
        coalesce(sum(CASE l.role {bits} ELSE 0 END), 0) AS roles
    FROM {table} AS t
    LEFT JOIN statement_line l {{index}} ON l.{column} = t.id AND l.account_id = :account
        AND l.state = 'matched' AND l.date BETWEEN :near_since AND :near_until
    WHERE {period}
    GROUP BY {group}
) AS j
"""  # noqa: S608 (constants only)


def _unclean_ids(clean: str, sqlite: bool) -> str:
    """The aggregate of the ids of the subjects that are not clean, as text."""
    if sqlite:
        return f"group_concat(CASE WHEN NOT ({clean}) THEN id END, ',')"
    return f"string_agg(CASE WHEN NOT ({clean}) THEN CAST(id AS text) END, ',')"


_UNCLEAN_TRANSFERS = _unclean_sql(
    "transfer", _TRANSFERS_IN_PERIOD, "transfer_id", _TRANSFER_ROLES, _TRANSFER_FIGURES
)
_UNCLEAN_COLLECTIONS = _unclean_sql(
    "collection", _COLLECTIONS_IN_PERIOD, "collection_id", _COLLECTION_ROLES, _COLLECTION_FIGURES
)
_CLEAN = {"transfer": _TRANSFER_CLEAN, "collection": _COLLECTION_CLEAN}

# Subjects a line of the period names (matched or suggested) that are not the period's own:
# the pure tie-out loads them, so they are tied out one by one here too.
_REFERENCED = """
SELECT DISTINCT l.{column} FROM statement_line l JOIN {table} t ON t.id = l.{column}
WHERE l.account_id = :account AND l.date BETWEEN :since AND :until
    AND l.{column} IS NOT NULL AND NOT ({period})
"""
_REFERENCED_TRANSFERS = _REFERENCED.format(
    column="transfer_id", table="transfer", period=_TRANSFERS_IN_PERIOD
)
_REFERENCED_COLLECTIONS = _REFERENCED.format(
    column="collection_id", table="collection", period=_COLLECTIONS_IN_PERIOD
)


@dataclass(frozen=True)
class PeriodSums:
    """The period's figures as the database sums them, and the exceptions to read."""

    lines: int
    credits: int
    debits: int
    own_movement: int  # ignored lines, and lines matched to another line
    subject_lines: int  # lines matched to a subject
    matched_count: int
    matched_amount: int
    opening_balance: int
    closing_balance: int
    # (after_line, line, expected_balance, stated_balance), in statement order
    gaps: list[tuple[int | None, int | None, int, int]]
    # (kind, id): the period's own subjects that are not clean
    unclean: list[tuple[str, int]]
    # (kind, id): subjects named by a line of the period but not the period's own
    referenced: list[tuple[str, int]]


def _bind(sql: str, values: dict[str, Any]) -> TextClause:
    types: dict[str, Any] = {"since": Date(), "until": Date()}
    types |= {"near_since": Date(), "near_until": Date()}
    types |= {"start": UTCDateTime(), "end": UTCDateTime(), "collections_since": UTCDateTime()}
    clause = text(sql)
    used = {name: value for name, value in values.items() if f":{name}" in sql}
    return clause.bindparams(
        *(bindparam(name, value, type_=types.get(name)) for name, value in used.items())
    )


def period_sums(
    session: Session, account_id: int, since: dt.date, until: dt.date, *, wallet: bool
) -> PeriodSums:
    """Sum the account's period [since, until] in the database (see the module's
    docstring); the subjects are the period's only for a wallet."""
    start, end = lagos_midnight_utc(since), lagos_midnight_utc(until + dt.timedelta(days=1))
    values: dict[str, Any] = {
        "account": account_id,
        "since": since,
        "until": until,
        "near_since": since - BOUNDARY,
        "near_until": until + BOUNDARY,
        "start": start,
        "end": end,
        # A collection is dated the day it was paid: one paid in the period was created
        # before (`reconcile.statements.period`).
        "collections_since": start - dt.timedelta(days=60),
    }

    def run(sql: str, **more: Any) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in session.execute(_bind(sql, {**values, **more}))]

    sqlite = session.get_bind().dialect.name == "sqlite"
    sums = [int(value) for value in run(_SUMS)[0]]
    count, credits, debits, own, to_subjects, matched_count, matched_amount = sums[:7]
    with_balance, name_collections, name_transfers = sums[7:10]
    matched_collections, matched_transfers = sums[10:]
    opening = closing = 0
    gaps: list[tuple[int | None, int | None, int, int]] = []
    if count:
        first = run(_END_LINE.format("ASC"))[0]
        last = run(_END_LINE.format("DESC"))[0]
        if first[1] is not None:
            opening = int(first[1]) - int(first[2])
        total = int(credits) - int(debits)
        closing = int(last[1]) if last[1] is not None else opening + total
        running = opening + total  # a statement without balances chains by definition
        if with_balance == count:
            # Every line states a balance: a break is between neighbours.
            if sqlite:
                breaks = _chain_breaks(session, account_id, since, until)
            else:
                breaks = int(run(_CHAIN_BREAKS)[0][0])
            if breaks:
                gaps += [(p, i, int(e), int(s)) for p, i, e, s in run(_BREAKS)]
            running = closing
        elif 0 < with_balance < count:
            # Some lines state none: the chain carries on through them (the general walk).
            for previous, line, expected, stated, k, is_last in run(_GAPS, opening=opening):
                if int(expected) != int(stated):
                    gaps.append((previous, line, int(expected), int(stated)))
                if is_last:
                    running = int(k) + total
        if closing != running:
            gaps.append((last[0], None, running, closing))
    unclean: list[tuple[str, int]] = []
    # Lines of the period naming a subject of each kind, how many of them are matched, and how
    # many of those name one of the period's own (unknown: not counted, so `_REFERENCED`
    # runs): when all three agree, no line of the period names a subject from outside.
    naming = {"collection": name_collections, "transfer": name_transfers}
    matched_naming = {"collection": matched_collections, "transfer": matched_transfers}
    own_named: dict[str, int] = {}
    if wallet:
        for kind, sql, index in (
            ("collection", _UNCLEAN_COLLECTIONS, "ix_statement_line_collection"),
            ("transfer", _UNCLEAN_TRANSFERS, "ix_statement_line_transfer"),
        ):
            hint = f"INDEXED BY {index}" if sqlite else ""
            ids = _unclean_ids(_CLEAN[kind], sqlite)
            ((named, joined),) = run(sql.format(index=hint, ids=ids))
            own_named[kind] = int(named)
            unclean += [(kind, int(row_id)) for row_id in (joined or "").split(",") if row_id]
    referenced: list[tuple[str, int]] = []
    for kind, sql in (
        ("collection", _REFERENCED_COLLECTIONS),
        ("transfer", _REFERENCED_TRANSFERS),
    ):
        if naming[kind] and not naming[kind] == matched_naming[kind] == own_named.get(kind):
            referenced += [(kind, row[0]) for row in run(sql)]
    if not wallet:
        # Without the period's subjects, every subject a line names is tied out by hand.
        referenced = [
            *[("collection", row[0]) for row in run(_ALL_NAMED.format(column="collection_id"))],
            *[("transfer", row[0]) for row in run(_ALL_NAMED.format(column="transfer_id"))],
        ]
    return PeriodSums(
        lines=int(count),
        credits=int(credits),
        debits=int(debits),
        own_movement=int(own),
        subject_lines=int(to_subjects),
        matched_count=int(matched_count),
        matched_amount=int(matched_amount),
        opening_balance=opening,
        closing_balance=closing,
        gaps=gaps,
        unclean=unclean,
        referenced=referenced,
    )


def _chain_breaks(session: Session, account_id: int, since: dt.date, until: dt.date) -> int:
    """The lines stating a balance other than the previous line's stated balance plus their
    own amount (what `_CHAIN_BREAKS` counts with `lag` on PostgreSQL), walked in statement order on
    SQLite's own cursor: SQLAlchemy's rows cost more than the walk itself, millions of times."""
    sql = _CHAIN.replace(":account", "?").replace(":since", "?").replace(":until", "?")
    driver = session.connection().connection.dbapi_connection
    assert driver is not None  # a connection in use
    cursor = driver.cursor()
    try:
        # SQLite stores a date as its ISO text (what the ORM binds a Date as).
        cursor.execute(sql, (account_id, since.isoformat(), until.isoformat()))
        breaks = 0
        previous = None
        while rows := cursor.fetchmany(10_000):
            for balance, signed in rows:
                if balance is not None and previous is not None and balance != previous + signed:
                    breaks += 1
                previous = balance
        return breaks
    finally:
        cursor.close()


_ALL_NAMED = (
    "SELECT DISTINCT {column} FROM statement_line"  # noqa: S608 (constants only)
    f" WHERE {_IN_PERIOD} AND {{column}} IS NOT NULL"
)


def exception_line_sql(columns: str) -> str:
    """The unmatched and suggested lines of the period, in statement order."""
    return (
        f"SELECT {columns} FROM statement_line WHERE {_IN_PERIOD}"  # noqa: S608
        f" AND (state = 'suggested' OR {_UNMATCHED}) ORDER BY {_ORDER}"
    )
