"""Provider checks: every lookup of a pass is a row, listed by either reference, pruned."""

from __future__ import annotations

import asyncio
import datetime as dt

import httpx
from sqlalchemy import Engine, func, select

from ledger.checks import prune_checks
from ledger.db import read_session, write_session
from ledger.models import ProviderCheck
from payrecon.settings import load_settings
from provider.errors import NotFoundError, ProviderUnavailableError
from reconcile.poller import run_pass
from tests.integration.console.seed import T0, FakeProvider, transaction, transfer
from tests.support.apps import ADMIN, StartReceiver

AUTH = {"authorization": f"Bearer {ADMIN}"}


def _pass(engine: Engine, database_url: str, provider: FakeProvider, now: dt.datetime) -> None:
    settings = load_settings(database_url=database_url, provider_max_rps=0)
    asyncio.run(run_pass(engine, provider, settings, now=now))


def _count(engine: Engine) -> int:
    with read_session(engine) as session:
        return int(session.execute(select(func.count()).select_from(ProviderCheck)).scalar_one())


def test_every_lookup_of_a_pass_is_kept_with_its_answer(database_url: str, engine: Engine) -> None:
    """A found, a not-found and an unavailable lookup each leave one row with what came back."""
    for reference in ("C-OK", "C-GONE", "C-DOWN"):
        transfer(engine, reference)
    provider = FakeProvider(
        {
            "C-OK": transaction("C-OK", amount=500_000, fee=2_500, status="successful"),
            "C-GONE": NotFoundError("Transaction not found", status_code=404),
            "C-DOWN": ProviderUnavailableError("bad gateway", status_code=502),
        }
    )
    _pass(engine, database_url, provider, T0 + dt.timedelta(minutes=1))
    with read_session(engine) as session:
        rows = session.execute(
            select(ProviderCheck).order_by(ProviderCheck.id)  # type: ignore[arg-type]
        ).scalars()
        seen = sorted(
            (r.result, r.http_status, r.provider_status, r.amount, r.fee, r.error) for r in rows
        )
    assert seen == [
        ("found", 200, "successful", 500_000, 2_500, None),
        ("not_found", 404, None, None, None, None),
        ("transient", 502, None, None, None, "bad gateway"),
    ]


def test_checks_api_pages_by_either_reference(
    database_url: str, engine: Engine, start_receiver: StartReceiver
) -> None:
    """Three passes give three checks, newest first, two per page, by either reference."""
    transfer(engine, "C-PAGE")
    provider = FakeProvider({"C-PAGE": ProviderUnavailableError("down", status_code=503)})
    for minutes in (1, 60, 600):
        _pass(engine, database_url, provider, T0 + dt.timedelta(minutes=minutes))
    provider.answers["C-PAGE"] = transaction("C-PAGE", amount=500_000, fee=0, status="pending")
    _pass(engine, database_url, provider, T0 + dt.timedelta(days=1))
    with start_receiver(admin_token=ADMIN) as url:
        first = httpx.get(f"{url}/api/transfers/C-PAGE/checks?limit=2", headers=AUTH).json()
        second = httpx.get(
            f"{url}/api/transfers/PRV-C-PAGE/checks",
            params={"limit": 2, "cursor": first["next_cursor"]},
            headers=AUTH,
        ).json()
        unknown = httpx.get(f"{url}/api/transfers/NOPE/checks", headers=AUTH)
        bad_cursor = httpx.get(f"{url}/api/transfers/C-PAGE/checks?cursor=xyz", headers=AUTH)
        bad_limit = httpx.get(f"{url}/api/transfers/C-PAGE/checks?limit=0", headers=AUTH)
        anonymous = httpx.get(f"{url}/api/transfers/C-PAGE/checks")
    assert [c["result"] for c in first["items"]] == ["found", "transient"]
    assert first["items"][0]["provider_status"] == "pending"
    assert [c["http_status"] for c in second["items"]] == [503, 503]
    assert second["next_cursor"] is None and second["reference"] == "C-PAGE"
    assert unknown.status_code == 404
    assert (bad_cursor.status_code, bad_limit.status_code) == (400, 400)
    assert anonymous.status_code == 401


def test_prune_drops_only_old_checks_of_settled_transfers(
    database_url: str, engine: Engine
) -> None:
    """An old check of a settled transfer goes; a recent one, and any of a pending one, stay."""
    transfer(engine, "C-SETTLED")
    transfer(engine, "C-PENDING")
    provider = FakeProvider(
        {
            "C-SETTLED": transaction("C-SETTLED", amount=500_000, fee=0, status="pending"),
            "C-PENDING": transaction("C-PENDING", amount=500_000, fee=0, status="pending"),
        }
    )
    _pass(engine, database_url, provider, T0 + dt.timedelta(minutes=1))
    provider.answers["C-SETTLED"] = transaction(
        "C-SETTLED", amount=500_000, fee=0, status="successful"
    )
    _pass(engine, database_url, provider, T0 + dt.timedelta(days=2))
    assert _count(engine) == 4
    with write_session(engine) as session:
        deleted = prune_checks(session, keep_days=1, now=T0 + dt.timedelta(days=2, hours=1))
    with read_session(engine) as session:
        left = sorted(
            (r.subject_id, r.provider_status)
            for r in session.execute(select(ProviderCheck)).scalars()
        )
    assert deleted == 1
    assert len(left) == 3 and ("successful" in {status for _, status in left})


def test_a_provider_text_no_column_holds_is_kept_cleaned(database_url: str, engine: Engine) -> None:
    """A NUL in a provider error is dropped from the check's error rather than failing the
    pass (its check shares the decision's transaction)."""
    transfer(engine, "C-NUL")
    provider = FakeProvider({"C-NUL": ProviderUnavailableError("bad\x00gateway", status_code=502)})
    _pass(engine, database_url, provider, T0 + dt.timedelta(minutes=1))
    with read_session(engine) as session:
        errors = [r.error for r in session.execute(select(ProviderCheck)).scalars()]
    assert errors == ["badgateway"]
