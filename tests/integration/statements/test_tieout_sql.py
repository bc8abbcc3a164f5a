"""The tie-out summed in the database (`reconcile.statements.periodsums`) against the pure
`statements.tieout.tie_out` over every line and subject loaded, on random small ledgers and
statements (hypothesis), on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, select, text
from sqlmodel import Session, col

from ledger.models import (
    Collection,
    StatementAccount,
    StatementImport,
    StatementLine,
    Transfer,
)
from reconcile.reports.period import lagos_midnight_utc
from reconcile.statements.facts import (
    COLLECTION_COLUMNS,
    LINE_COLUMNS,
    TRANSFER_COLUMNS,
    Subjects,
    collection_subject,
    line_fact,
    load_accounts,
    subjects_by_ids,
    transfer_subject,
)
from reconcile.statements.period import period_tie_out
from reconcile.statements.periodsums import BOUNDARY, period_sums
from statements.facts import AccountKind, SubjectKind
from statements.tieout import TieOut, tie_out

SINCE, UNTIL = dt.date(2026, 11, 1), dt.date(2026, 11, 30)
AMOUNTS = st.sampled_from([1_000, 2_500, 100_000, 102_500])
FEES = st.sampled_from([0, 1_000, 2_500])
# Days around the period (its boundary and beyond), and hours either side of Lagos midnight.
DAYS = st.integers(-12, 42).map(lambda n: SINCE + dt.timedelta(days=n))
HOURS = st.sampled_from([0, 11, 22, 23])
# Weighted towards a payout's two lines, the common case the database sums alone.
ROLES = st.sampled_from(
    [None, "payout", "refund", "reversal", "collection_credit"]
    + ["payout_amount", "payout_fee"] * 3
)


def _instant(day: dt.date, hour: int) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour), tzinfo=dt.UTC)


@st.composite
def ledgers(draw: st.DrawFn) -> dict[str, Any]:
    """Transfers, collections and the lines of a wallet and a bank account."""
    transfers = [
        {
            "amount": draw(AMOUNTS),
            "fee": draw(FEES),
            "provider_fee": draw(st.none() | FEES),
            "status": draw(st.sampled_from(["pending", "successful", "failed", "reversed"])),
            "initiation": draw(st.sampled_from([None, None, "rejected"])),
            "created_at": _instant(draw(DAYS), draw(HOURS)),
        }
        for _ in range(draw(st.integers(0, 4)))
    ]
    collections = [
        {
            "amount": draw(AMOUNTS),
            "amount_paid": draw(st.none() | AMOUNTS),
            "fee": draw(FEES),
            "status": draw(st.sampled_from(["pending", "successful", "failed"])),
            "paid_at": draw(st.none() | DAYS.map(lambda day: _instant(day, 12))),
            "created_at": _instant(draw(DAYS), draw(HOURS)),
        }
        for _ in range(draw(st.integers(0, 3)))
    ]
    lines_base = {
        "account": "wallet",
        "date": SINCE,
        "amount": 1_000,
        "direction": "debit",
        "balance": None,
        "state": "matched",
        "import": 1,
        "chain": True,
    }
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        state = draw(st.sampled_from(["matched"] * 4 + ["suggested", "unmatched", "ignored"]))
        target = draw(st.sampled_from(["transfer", "transfer", "transfer", "collection", "line"]))
        lines.append(
            {
                "account": draw(st.sampled_from(["wallet", "wallet", "wallet", "bank"])),
                "date": draw(DAYS),
                "amount": draw(AMOUNTS),
                "direction": draw(st.sampled_from(["debit", "credit"])),
                "balance": draw(st.none() | st.integers(-(10**6), 10**6)),
                "state": state,
                "target": target if state in ("matched", "suggested") else "none",
                "which": draw(st.integers(0, 3)),
                "role": draw(ROLES),
                "import": draw(st.integers(1, 2)),
                "chain": draw(st.booleans()),
                # Mostly the subject's own figure and day: a clean subject, or nearly one.
                "exact": draw(st.integers(0, 3)) > 0,
                "shift": draw(st.sampled_from([0, 0, 0, 1, -1, 8, -8, 30])),
            }
        )
    # Each subject's own lines: any set of roles, mostly at the ledger's figures and day.
    for target, count, roles in (
        (
            "transfer",
            len(transfers),
            ["payout", "payout_amount", "payout_fee", "refund", "reversal"],
        ),
        ("collection", len(collections), ["collection_credit"]),
    ):
        for which in range(count):
            for role in draw(st.lists(st.sampled_from(roles), max_size=3)):
                lines.append(
                    {
                        **lines_base,
                        "target": target,
                        "which": which,
                        "role": role,
                        "exact": draw(st.integers(0, 5)) > 0,
                        "shift": draw(st.sampled_from([0, 0, 0, 0, 1, 8, 30])),
                    }
                )
    return {"transfers": transfers, "collections": collections, "lines": lines}


def _id(value: int | None) -> int:
    assert value is not None  # flushed
    return value


def _store(engine: Engine, ledger: dict[str, Any]) -> None:
    with Session(engine) as session:
        for table in (
            "statement_line",
            "statement_import",
            "period_lock",
            "statement_account",
            "collection",
            "transfer",
        ):
            session.execute(text(f"DELETE FROM {table}"))
        for i, row in enumerate(ledger["transfers"]):
            session.add(
                Transfer(
                    reference=f"t-{i}",
                    provider_reference=f"TRF_{i}",
                    origin="initiated",
                    confirmed=True,
                    updated_at=row["created_at"],
                    **row,
                )
            )
        for i, row in enumerate(ledger["collections"]):
            session.add(
                Collection(
                    reference=f"c-{i}",
                    provider_reference=f"COL_{i}",
                    origin="created",
                    confirmed=True,
                    provider_fee=row["fee"],
                    updated_at=row["created_at"],
                    **row,
                )
            )
        accounts = {
            kind: StatementAccount(name=f"{kind}-account", kind=kind) for kind in ("wallet", "bank")
        }
        session.add_all(accounts.values())
        session.flush()
        account_ids = {kind: _id(account.id) for kind, account in accounts.items()}
        imports = {
            (kind, number): StatementImport(
                account_id=account_ids[kind],
                file_name="x.csv",
                format="csv",
                sha256="0" * 64,
                size=1,
                imported_by="test",
                imported_at=_instant(UNTIL, 12),
            )
            for kind in accounts
            for number in (1, 2)
        }
        session.add_all(imports.values())
        session.flush()
        transfer_ids = list(session.execute(select(Transfer.id)).scalars())  # type: ignore[call-overload]
        collection_ids = list(session.execute(select(Collection.id)).scalars())  # type: ignore[call-overload]
        stored: list[StatementLine] = []
        balance = {"wallet": 0, "bank": 0}
        for number, row in enumerate(ledger["lines"], start=1):
            row = {**row, **_exact(ledger, row)}
            kind = row["account"]
            signed = row["amount"] if row["direction"] == "credit" else -row["amount"]
            balance[kind] += signed
            line = StatementLine(
                account_id=account_ids[kind],
                identity=f"{number:064d}",
                date=row["date"],
                amount=row["amount"],
                direction=row["direction"],
                # Mostly a chain (so neighbours' balances agree), sometimes a break or none.
                balance=balance[kind] if row["chain"] else row["balance"],
                reference=f"ref-{number}",
                narration="",
                import_id=_id(imports[(kind, row["import"])].id),
                file_line=number,
                position=number,
                state=row["state"],
                role=row["role"] if row["target"] in ("transfer", "collection") else None,
                ignored_as="other" if row["state"] == "ignored" else None,
            )
            ids = {"transfer": transfer_ids, "collection": collection_ids}.get(row["target"])
            if ids:
                setattr(line, f"{row['target']}_id", ids[row["which"] % len(ids)])
            if row["target"] == "line" and stored:
                line.other_line_id = stored[row["which"] % len(stored)].id
            session.add(line)
            session.flush()
            stored.append(line)
        session.commit()


_DEBITS = ("payout", "payout_amount", "payout_fee")


def _exact(ledger: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """The figure, direction and day the ledger expects of the line's role in its subject
    (when the line is `exact` and its subject and role have one)."""
    subjects = {"transfer": ledger["transfers"], "collection": ledger["collections"]}
    rows = subjects.get(row["target"])
    if not rows or not row["exact"] or row["role"] is None:
        return {}
    subject = rows[row["which"] % len(rows)]
    paid = subject.get("amount_paid") or subject["amount"]
    fee = subject["fee"] if subject.get("provider_fee") is None else subject["provider_fee"]
    if subject.get("initiation") == "rejected":
        fee = 0
    figure = {
        "payout": subject["amount"] + fee,
        "payout_fee": fee,
        "collection_credit": paid - fee,
    }.get(row["role"], subject["amount"])
    if figure <= 0:
        return {}
    day = subject["created_at"].date() + dt.timedelta(days=row["shift"])
    direction = "debit" if row["role"] in _DEBITS else "credit"
    return {"amount": figure, "direction": direction, "date": day}


def _ordered(session: Session, account_id: int, since: dt.date, until: dt.date) -> list[Any]:
    statement = (
        select(*LINE_COLUMNS)
        .where(
            col(StatementLine.account_id) == account_id,
            col(StatementLine.date).between(since, until),
        )
        .order_by(
            col(StatementLine.date), col(StatementLine.import_id), col(StatementLine.position)
        )
    )
    return [tuple(row) for row in session.execute(statement)]


def _account_id(session: Session, name: str) -> int:
    found = session.execute(
        select(StatementAccount).where(col(StatementAccount.name) == name)
    ).scalar_one()
    return _id(found.id)


def loaded_tie_out(session: Session, account: str, since: dt.date, until: dt.date) -> TieOut:
    """The tie-out as it was computed before the sums moved into the database: every line and
    subject of the period loaded and handed to the pure `tie_out`."""
    account_id = _account_id(session, account)
    accounts = load_accounts(session)
    rows = _ordered(session, account_id, since, until)
    subjects = Subjects()
    if accounts.kinds[account_id] is AccountKind.WALLET:
        start, end = lagos_midnight_utc(since), lagos_midnight_utc(until + dt.timedelta(days=1))
        for row in session.execute(
            select(*TRANSFER_COLUMNS).where(
                col(Transfer.created_at) >= start, col(Transfer.created_at) < end
            )
        ):
            subjects.add(SubjectKind.TRANSFER, row[0], transfer_subject(row))
        for row in session.execute(
            select(*COLLECTION_COLUMNS).where(
                col(Collection.created_at) >= start - dt.timedelta(days=60),
                col(Collection.created_at) < end,
            )
        ):
            subject = collection_subject(row)
            if since <= subject.date <= until:
                subjects.add(SubjectKind.COLLECTION, row[0], subject)
    near = _ordered(session, account_id, since - BOUNDARY, since - dt.timedelta(days=1))
    near += _ordered(session, account_id, until + dt.timedelta(days=1), until + BOUNDARY)
    transfer_ids = set(subjects.ids_of(SubjectKind.TRANSFER))
    collection_ids = set(subjects.ids_of(SubjectKind.COLLECTION))
    near = [r for r in near if r[8] in transfer_ids or r[9] in collection_ids]
    missing_t = {r[8] for r in rows if r[8] is not None} - transfer_ids
    missing_c = {r[9] for r in rows if r[9] is not None} - collection_ids
    subjects.merge(subjects_by_ids(session, missing_t, missing_c))
    facts = [line_fact(row, accounts, subjects) for row in rows]
    opening = closing = 0
    if facts:
        first, last = facts[0], facts[-1]
        if first.balance is not None:
            opening = first.balance - first.signed_amount
        closing = (
            last.balance
            if last.balance is not None
            else opening + sum(line.signed_amount for line in facts)
        )
    else:
        before = session.execute(
            select(StatementLine.balance)  # type: ignore[call-overload]
            .where(col(StatementLine.account_id) == account_id, col(StatementLine.date) < since)
            .order_by(
                col(StatementLine.date).desc(),
                col(StatementLine.import_id).desc(),
                col(StatementLine.position).desc(),
            )
            .limit(1)
        ).first()
        opening = closing = 0 if before is None or before[0] is None else int(before[0])
    return tie_out(
        account=account,
        since=since,
        until=until,
        opening_balance=opening,
        closing_balance=closing,
        lines=[*facts, *(line_fact(row, accounts, subjects) for row in near)],
        subjects=subjects.facts.values(),
    )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ledger=ledgers())
def test_the_tie_out_summed_in_the_database_is_the_pure_one(
    engine: Engine, ledger: dict[str, Any]
) -> None:
    """On any small ledger and statements, the database's tie-out of either account gives
    the same JSON and the same explanations as the pure tie-out of every row loaded."""
    _store(engine, ledger)
    with Session(engine) as session:
        for account in ("wallet-account", "bank-account"):
            summed = period_tie_out(session, account, SINCE, UNTIL)
            loaded = loaded_tie_out(session, account, SINCE, UNTIL)
            assert summed.to_json() == loaded.to_json()
            assert summed.explanations() == loaded.explanations()


def test_a_month_of_clean_payouts_reads_no_subject_one_by_one(engine: Engine) -> None:
    """Payouts whose two lines show exactly the ledger's figures tie out from the sums
    alone, and a fee line charged twice is the one mismatch listed."""
    ledger: dict[str, Any] = {"transfers": [], "collections": [], "lines": []}
    for i in range(3):
        day = SINCE + dt.timedelta(days=i)
        ledger["transfers"].append(
            {
                "amount": 100_000,
                "fee": 1_000,
                "provider_fee": 1_000,
                "status": "successful",
                "initiation": None,
                "created_at": _instant(day, 11),
            }
        )
        for role, amount in (("payout_amount", 100_000), ("payout_fee", 1_000)):
            ledger["lines"].append(
                {
                    "account": "wallet",
                    "date": day,
                    "amount": amount,
                    "direction": "debit",
                    "balance": None,
                    "state": "matched",
                    "target": "transfer",
                    "which": i,
                    "role": role,
                    "import": 1,
                    "chain": True,
                    "exact": False,
                    "shift": 0,
                }
            )
    _store(engine, ledger)
    with Session(engine) as session:
        clean = period_tie_out(session, "wallet-account", SINCE, UNTIL)
        wallet = _account_id(session, "wallet-account")
        sums = period_sums(session, wallet, SINCE, UNTIL, wallet=True)
    assert (sums.unclean, sums.referenced) == ([], [])
    assert clean.tied_out
    assert clean.to_json()["ledger_movement"] == -303_000
    ledger["lines"].append({**ledger["lines"][-1], "date": SINCE + dt.timedelta(days=2)})
    _store(engine, ledger)
    with Session(engine) as session:
        twice = period_tie_out(session, "wallet-account", SINCE, UNTIL)
        loaded = loaded_tie_out(session, "wallet-account", SINCE, UNTIL)
    assert twice.to_json() == loaded.to_json()
    assert [m.role for m in twice.mismatches] == ["payout_fee"]
