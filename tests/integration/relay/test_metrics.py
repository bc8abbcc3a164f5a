"""The relay's figures on `/metrics` of a real server, read from the ledger at each scrape."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import httpx
from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine

from ledger.db import create_db_engine
from relay.metrics import register_relay_metrics
from tests.integration.relay.conftest import AUTH, add_transfer, emit, record_attempt


def _samples(text: str) -> dict[tuple[str, str], float]:
    """(sample name, outcome label or "") → value, for the relay's families."""
    return {
        (sample.name, sample.labels.get("outcome", "")): sample.value
        for family in text_string_to_metric_families(text)
        if family.name.startswith("payrecon_relay")
        for sample in family.samples
    }


def test_a_scrape_counts_pending_deliveries_and_attempts(relay_url: str, engine: Engine) -> None:
    """Pending deliveries, the oldest one's age and attempts by outcome are the ledger's figures
    at the moment of each scrape; a removed endpoint's deliveries are not pending work."""
    empty = _samples(httpx.get(f"{relay_url}/metrics").text)
    assert empty[("payrecon_relay_pending", "")] == 0
    assert empty[("payrecon_relay_oldest_pending_seconds", "")] == 0
    assert empty[("payrecon_relay_attempts_total", "delivered")] == 0
    for _ in range(3):
        httpx.post(f"{relay_url}/api/endpoints", json={"url": "http://10.0.0.7/h"}, headers=AUTH)
    hour_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    old = emit(engine, add_transfer(engine, "M-1"), "M-1", now=hour_ago)
    new = emit(engine, add_transfer(engine, "M-2"), "M-2")
    record_attempt(engine, old.delivery_ids[0], outcome="retry")
    record_attempt(engine, old.delivery_ids[0], outcome="delivered", status_code=200)
    record_attempt(engine, old.delivery_ids[1], outcome="failed")
    record_attempt(engine, new.delivery_ids[0], outcome="retry")
    seen = _samples(httpx.get(f"{relay_url}/metrics").text)
    # Six deliveries: one delivered, one failed, four pending (one of them retrying).
    assert seen[("payrecon_relay_pending", "")] == 4
    assert 3500 < seen[("payrecon_relay_oldest_pending_seconds", "")] < 3 * 3600
    assert seen[("payrecon_relay_attempts_total", "retry")] == 2
    assert seen[("payrecon_relay_attempts_total", "delivered")] == 1
    assert seen[("payrecon_relay_attempts_total", "failed")] == 1
    httpx.delete(f"{relay_url}/api/endpoints/3", headers=AUTH)
    after = _samples(httpx.get(f"{relay_url}/metrics").text)
    assert after[("payrecon_relay_pending", "")] == 2
    assert after[("payrecon_relay_oldest_pending_seconds", "")] < 3600


def test_a_ledger_that_does_not_answer_leaves_the_relay_figures_out(tmp_path: Path) -> None:
    """A scrape while the database cannot be opened renders the other metrics, without the
    relay's, instead of failing."""
    engine = create_db_engine(f"sqlite:///{tmp_path}/missing/dir/ledger.db")
    registry = CollectorRegistry()
    Counter("payrecon_other", "Another metric of the same registry.", registry=registry).inc()
    register_relay_metrics(registry, engine)
    try:
        text = generate_latest(registry).decode()
    finally:
        engine.dispose()
    assert "payrecon_relay_pending" not in text
    assert "payrecon_other_total 1.0" in text
