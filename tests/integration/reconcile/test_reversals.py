"""Reversals (PRODUCT.md): a confirmed success that came back is found by re-verification or
by a webhook a lookup confirms, recorded once (finding, alert, `transfer.reversed`), and never
undone by a later `successful` answer."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from ledger.db import read_session, write_session
from ledger.models import Alert, Finding, ProviderCheck, RelayEvent, Transfer
from ledger.queries import ExpectedTransfer, find_transfer, register_expected
from ledger.types import utcnow
from provider.client import AsyncProviderClient, ProviderClient
from provider.errors import TransientError
from provider.models import Transaction
from receiver.apply import IncomingDelivery, apply_delivery
from receiver.events import parse_event
from reconcile.poller import run_pass
from tests.integration.reconcile.helpers import FakeLookup, running_sandbox, settings_for
from tests.integration.reconcile.test_advice_flow import RecordingSink

HOUR = dt.timedelta(hours=1)


def _transfer(engine: Engine, reference: str) -> Transfer:
    with read_session(engine) as session:
        transfer = find_transfer(session, reference)
        assert transfer is not None
        session.expunge(transfer)
        return transfer


def _relay(engine: Engine, reference: str) -> list[tuple[int, str, dict[str, Any]]]:
    """The transfer's relay events as (sequence, type, data), in sequence order."""
    with read_session(engine) as session:
        transfer_id = find_transfer(session, reference).id  # type: ignore[union-attr]
        rows = session.execute(
            select(RelayEvent)
            .where(RelayEvent.subject == "transfer", RelayEvent.subject_id == transfer_id)  # type: ignore[arg-type]
            .order_by(RelayEvent.sequence)  # type: ignore[arg-type]
        ).scalars()
        return [(e.sequence, e.type, json.loads(e.body)["data"]) for e in rows]


def _findings(engine: Engine, reference: str) -> list[tuple[str, str, bool]]:
    with read_session(engine) as session:
        transfer_id = find_transfer(session, reference).id  # type: ignore[union-attr]
        rows = session.execute(
            select(Finding)
            .where(Finding.subject == "transfer", Finding.subject_id == transfer_id)
            .order_by(Finding.id)  # type: ignore[arg-type]
        ).scalars()
        return [(f.kind, f.detail, f.resolved_at is None) for f in rows]


def _webhook(engine: Engine, body: dict[str, Any], now: dt.datetime) -> str:
    """Apply one webhook through the receiver's per-delivery path; its outcome."""
    raw = json.dumps(body).encode()
    delivery = IncomingDelivery(
        now, "127.0.0.1", {}, raw, hashlib.sha256(raw).hexdigest(), len(raw), webhook_id=None
    )
    delivery.parsed = parse_event(raw)
    with write_session(engine) as session:
        applied = apply_delivery(session, delivery, now=now)
    return str(applied.outcome)


def _failed_webhook(provider_reference: str, reference: str) -> dict[str, Any]:
    return {
        "event": "transfer.failed",
        "data": {
            "reference": provider_reference,
            "merchant_reference": reference,
            "status": "failed",
            "failure_reason": "Transfer reversed by beneficiary bank",
        },
    }


def _pay(sandbox: Any, engine: Engine, reference: str, amount: int = 150_000) -> str:
    """Initiate at the sandbox and register the transfer; the provider's reference."""
    account = sandbox.accounts()[0]
    with ProviderClient(sandbox.base_url, sandbox.config.secret_key) as client:
        answer = client.initiate_transfer(
            amount=amount,
            bank_code=account["bank_code"],
            account_number=account["account_number"],
            reference=reference,
        )
    with write_session(engine) as session:
        register_expected(
            session, ExpectedTransfer(reference, amount, answer.fee, answer.reference), now=utcnow()
        )
    return str(answer.reference)


def _pass(engine: Engine, settings: Any, now: dt.datetime, sink: Any = None) -> Any:
    async def go() -> Any:
        async with AsyncProviderClient(
            settings.provider_base_url, settings.provider_secret_key.get_secret_value()
        ) as client:
            return await run_pass(engine, client, settings, now=now, sink=sink)

    return asyncio.run(go())


def _confirmed(sandbox: Any, engine: Engine, settings: Any, reference: str) -> dt.datetime:
    """Run passes until the provider confirmed the transfer successful; the pass's clock."""
    for _ in range(50):
        now = utcnow()
        _pass(engine, settings, now)
        if _transfer(engine, reference).confirmed:
            assert _transfer(engine, reference).status == "successful"
            return now
        sandbox.http.post(
            f"/_sandbox/transfers/{reference}/complete", json={"status": "successful"}
        )
    raise AssertionError("never confirmed")


def test_reversal_found_by_reverification_with_the_webhook_dropped(engine: Engine) -> None:
    """A success reversed at the sandbox without a webhook is found at the first age: status
    reversed (still confirmed), the finding with both times, one alert, `transfer.reversed`
    next in the transfer's sequence, and nothing more after the last age."""
    with running_sandbox() as sandbox:
        settings = settings_for(
            engine.url.render_as_string(hide_password=False), sandbox, check_backoff=0
        )
        provider_reference = _pay(sandbox, engine, "REV-1")
        confirmed_now = _confirmed(sandbox, engine, settings, "REV-1")
        settled = _transfer(engine, "REV-1")
        assert settled.next_check_at == settled.confirmed_at + HOUR  # type: ignore[operator]
        answer = sandbox.http.post(
            "/_sandbox/transfers/REV-1/reverse",
            json={"reason": "Beneficiary bank recalled it", "webhook": False},
        )
        assert answer.status_code == 200, answer.text
        early = _pass(engine, settings, confirmed_now + dt.timedelta(minutes=59))
        assert early.checked == 0 and _transfer(engine, "REV-1").status == "successful"
        sink = RecordingSink()
        at_age = confirmed_now + HOUR + dt.timedelta(seconds=5)
        summary = _pass(engine, settings, at_age, sink)
        assert (summary.reverified, summary.reversed, summary.checked) == (1, 1, 1)
        transfer = _transfer(engine, "REV-1")
        assert (transfer.status, transfer.confirmed, transfer.reversal_source) == (
            "reversed",
            True,
            "lookup",
        )
        assert transfer.reversed_at == at_age and transfer.next_check_at is None
        assert transfer.reversal_reason == "Beneficiary bank recalled it"
        kinds = [(kind, is_open) for kind, _, is_open in _findings(engine, "REV-1")]
        assert kinds == [("reversed_after_success", True)]
        detail = _findings(engine, "REV-1")[0][1]
        assert "confirmed successful at" in detail and "reversed at" in detail
        assert "Beneficiary bank recalled it" in detail and "(lookup)" in detail
        events = _relay(engine, "REV-1")
        assert [(seq, kind) for seq, kind, _ in events] == [
            (1, "transfer.confirmed"),
            (2, "transfer.reversed"),
            (3, "finding.opened"),
        ]
        data = events[1][2]
        assert data == {
            "reference": "REV-1",
            "provider_reference": provider_reference,
            "amount": 150_000,
            "fee": transfer.fee,
            "failure_reason": "Beneficiary bank recalled it",
            "confirmed_at": events[0][2]["confirmed_at"],
            "reversed_at": at_age.isoformat().replace("+00:00", "Z"),
            "source": "lookup",
        }
        assert len(sink.sent) == 1 and "REV-1" in sink.sent[0][1]
        # Later passes, a restart included, neither look it up nor alert again.
        for days in (1, 3, 30):
            later = _pass(engine, settings, confirmed_now + dt.timedelta(days=days), sink)
            assert later.checked == 0
        assert len(sink.sent) == 1
        with read_session(engine) as session:
            assert session.execute(select(func.count()).select_from(Alert)).scalar_one() == 1


def test_a_failed_webhook_after_a_success_is_checked_at_once_both_ways(engine: Engine) -> None:
    """A `transfer.failed` webhook for a confirmed success makes it due at once: a reversal
    (source webhook) when the provider agrees, `status_conflict` when it still says successful
    (the transfer stays successful and keeps its re-verification schedule)."""
    with running_sandbox() as sandbox:
        settings = settings_for(
            engine.url.render_as_string(hide_password=False), sandbox, check_backoff=0
        )
        reversed_ref = _pay(sandbox, engine, "WH-REV")
        kept_ref = _pay(sandbox, engine, "WH-KEPT")
        _confirmed(sandbox, engine, settings, "WH-REV")
        _confirmed(sandbox, engine, settings, "WH-KEPT")
        sandbox.http.post(
            "/_sandbox/transfers/WH-REV/reverse",
            json={"reason": "Transfer reversed by beneficiary bank", "webhook": False},
        ).raise_for_status()
        now = utcnow()
        assert _webhook(engine, _failed_webhook(reversed_ref, "WH-REV"), now) == "accepted"
        assert _webhook(engine, _failed_webhook(kept_ref, "WH-KEPT"), now) == "accepted"
        # The evidence alone changes nothing the provider confirmed.
        assert _transfer(engine, "WH-REV").status == "successful"
        assert _findings(engine, "WH-REV") == []
        summary = _pass(engine, settings, now + dt.timedelta(seconds=1))
        assert (summary.checked, summary.reversed) == (2, 1)
        gone = _transfer(engine, "WH-REV")
        assert (gone.status, gone.reversal_source) == ("reversed", "webhook")
        assert [k for k, _, _ in _findings(engine, "WH-REV")] == ["reversed_after_success"]
        kept = _transfer(engine, "WH-KEPT")
        assert (kept.status, kept.confirmed, kept.reversed_at) == ("successful", True, None)
        assert [k for k, _, _ in _findings(engine, "WH-KEPT")] == ["status_conflict"]
        assert kept.next_check_at == kept.confirmed_at + HOUR  # type: ignore[operator]


def _found(status: str, reason: str | None = None) -> Transaction:
    return Transaction(
        reference="TRF_U",
        merchant_reference="U-1",
        amount=50_000,
        fee=1_000,
        status=status,
        failure_reason=reason,
    )


def _registered(engine: Engine, *references: str) -> None:
    with write_session(engine) as session:
        for reference in references:
            register_expected(
                session,
                ExpectedTransfer(reference, 50_000, 1_000, f"TRF_{reference}"),
                now=utcnow(),
            )


def _successes(references: list[str]) -> FakeLookup:
    """A provider answering successful for each reference (looked up as `TRF_{reference}`)."""
    return FakeLookup(
        {
            f"TRF_{r}": _found("successful").model_copy(
                update={"reference": f"TRF_{r}", "merchant_reference": r}
            )
            for r in references
        }
    )


def _fake_pass(engine: Engine, lookup: FakeLookup, settings: Any, now: dt.datetime) -> Any:
    return asyncio.run(run_pass(engine, lookup, settings, now=now))


def _fake_settings(database_url: str, **overrides: Any) -> Any:
    from payrecon.settings import load_settings

    values: dict[str, Any] = {
        "database_url": database_url,
        "provider_base_url": "http://127.0.0.1:9",
        "provider_secret_key": "sk_test_" + "x" * 32,
        "provider_max_rps": 0,
        "check_backoff": 10,
        "check_backoff_max": 10,
        "stale_after": 10**6,
    }
    values.update(overrides)
    return load_settings(**values)


def test_a_reversal_is_never_undone(engine: Engine) -> None:
    """After a reversal a `successful` answer (made due by a success webhook) is a
    `status_conflict`: the transfer stays reversed and the reversal is recorded once."""
    settings = _fake_settings(engine.url.render_as_string(hide_password=False))
    _registered(engine, "U-1")
    lookup = FakeLookup({"TRF_U-1": _found("successful")})
    lookup.answers["TRF_U-1"] = _found("successful").model_copy(update={"reference": "TRF_U-1"})
    start = utcnow()
    _fake_pass(engine, lookup, settings, start)
    lookup.answers["TRF_U-1"] = lookup.answers["TRF_U-1"].model_copy(
        update={"status": "failed", "failure_reason": "Recalled"}
    )
    assert _fake_pass(engine, lookup, settings, start + HOUR).reversed == 1
    lookup.answers["TRF_U-1"] = lookup.answers["TRF_U-1"].model_copy(
        update={"status": "successful", "failure_reason": None}
    )
    success = {
        "event": "transfer.success",
        "data": {
            "reference": "TRF_U-1",
            "merchant_reference": "U-1",
            "status": "successful",
            "amount": 50_000,
            "fee": 1_000,
        },
    }
    assert _webhook(engine, success, start + 2 * HOUR) == "accepted"
    again = _fake_pass(engine, lookup, settings, start + 2 * HOUR)
    assert (again.checked, again.reversed) == (1, 0)
    transfer = _transfer(engine, "U-1")
    assert (transfer.status, transfer.confirmed) == ("reversed", True)
    assert transfer.reversed_at == start + HOUR and transfer.next_check_at is None
    kinds = sorted(k for k, _, _ in _findings(engine, "U-1"))
    assert kinds == ["reversed_after_success", "status_conflict"]
    assert [kind for _, kind, _ in _relay(engine, "U-1")].count("transfer.reversed") == 1


def test_lookups_per_transfer_are_bounded_by_the_ages(engine: Engine) -> None:
    """Over a transfer's life the provider is asked once to confirm, once per listed age and
    once per provider error retried; never after the last age, however many passes run."""
    settings = _fake_settings(
        engine.url.render_as_string(hide_password=False), reverify_after="100s,200s,300s"
    )
    _registered(engine, "C-1", "C-2")
    found = {
        r: _found("successful").model_copy(update={"reference": f"TRF_{r}"}) for r in ("C-1", "C-2")
    }
    lookup = FakeLookup({f"TRF_{r}": answer for r, answer in found.items()})
    start = utcnow()
    _fake_pass(engine, lookup, settings, start)
    assert lookup.calls.count("TRF_C-1") == 1
    # C-2's second age meets a provider error: it is retried after the backoff (10 s).
    for second in range(5, 2000, 5):
        now = start + dt.timedelta(seconds=second)
        if second == 200:
            lookup.answers["TRF_C-2"] = TransientError("503 from the provider")
        elif second == 205:
            lookup.answers["TRF_C-2"] = found["C-2"]
        _fake_pass(engine, lookup, settings, now)
    assert lookup.calls.count("TRF_C-1") == 1 + 3
    assert lookup.calls.count("TRF_C-2") == 1 + 3 + 1
    for reference in ("C-1", "C-2"):
        transfer = _transfer(engine, reference)
        assert (transfer.reverify_done, transfer.next_check_at) == (3, None)
        assert transfer.status == "successful" and _findings(engine, reference) == []
    with read_session(engine) as session:
        kept = session.execute(select(func.count()).select_from(ProviderCheck)).scalar_one()
    assert kept == len(lookup.calls)


def test_a_thousand_clean_successes_reverified_raise_nothing(engine: Engine) -> None:
    """1,000 confirmed successes looked up again at their first age: 1,000 re-verified, no
    reversal, no finding, and each scheduled for its next age."""
    settings = _fake_settings(engine.url.render_as_string(hide_password=False))
    references = [f"K-{i}" for i in range(1000)]
    _registered(engine, *references)
    lookup = _successes(references)
    start = utcnow()
    first = _fake_pass(engine, lookup, settings, start)
    assert (first.confirmed, first.reverified) == (1000, 0)
    again = _fake_pass(engine, lookup, settings, start + HOUR + dt.timedelta(seconds=1))
    assert (again.checked, again.reverified, again.reversed, again.findings_raised) == (
        1000,
        1000,
        0,
        0,
    )
    with read_session(engine) as session:
        assert session.execute(select(func.count()).select_from(Finding)).scalar_one() == 0
        rows = session.execute(select(Transfer.confirmed_at, Transfer.next_check_at)).all()
    assert len(rows) == 1000
    assert all(due == confirmed + 24 * HOUR for confirmed, due in rows)


@pytest.mark.postgres
def test_two_reconcilers_record_each_reversal_once(postgres_url: str) -> None:
    """Two passes at once on PostgreSQL over 40 reversed successes: one finding, one alert and
    one `transfer.reversed` per transfer."""
    from ledger.db import create_db_engine

    engine = create_db_engine(postgres_url)
    try:
        # One alert per reversal, as before grouping (PAYRECON_ALERT_GROUP_AFTER is what groups).
        settings = _fake_settings(postgres_url, provider_concurrency=4, alert_group_after=100_000)
        references = [f"P-{i}" for i in range(40)]
        _registered(engine, *references)
        lookup = _successes(references)
        start = utcnow()
        _fake_pass(engine, lookup, settings, start)
        for key, answer in lookup.answers.items():
            lookup.answers[key] = answer.model_copy(
                update={"status": "failed", "failure_reason": "Recalled"}
            )
        sinks = [RecordingSink(), RecordingSink()]

        async def both() -> list[Any]:
            at = start + HOUR + dt.timedelta(seconds=1)
            return list(
                await asyncio.gather(
                    *(
                        run_pass(engine, lookup, settings, now=at, sink=sink, chunk_size=7)
                        for sink in sinks
                    )
                )
            )

        summaries = asyncio.run(both())
        assert sum(s.reversed for s in summaries) == 40
        with read_session(engine) as session:
            kinds = session.execute(select(Finding.kind)).scalars().all()
            reversed_events = session.execute(
                select(func.count())
                .select_from(RelayEvent)
                .where(RelayEvent.type == "transfer.reversed")  # type: ignore[arg-type]
            ).scalar_one()
            alerts = session.execute(select(func.count()).select_from(Alert)).scalar_one()
        assert kinds == ["reversed_after_success"] * 40
        assert reversed_events == 40 and alerts == 40
        assert len(sinks[0].sent) + len(sinks[1].sent) == 40
    finally:
        engine.dispose()
