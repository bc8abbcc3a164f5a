"""The demo's collections: money coming in, paid by the sandbox's "customers" on purpose.

Most are paid exactly; one is overpaid, one underpaid, one paid after its expiry (the
sandbox's `collection_late` fault) and one never paid (it expires). The sandbox runs with a
short collection expiry and the demo's grace is short too, so the reconciler's last look
after expiry happens within the minute.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import httpx
from sqlalchemy import Engine, func, or_, select
from sqlmodel import col

from ledger.db import read_session
from ledger.events.types import Subject
from ledger.models import Collection, Finding
from ledger.types import utcnow
from payments.collections import CollectionRequest, create_collection
from payrecon.clients import make_client
from payrecon.settings import Settings
from sandbox.faults import parse_faults

COLLECTION_TTL = 3.0  # seconds until a demo collection's account expires at the sandbox
COLLECTION_GRACE = 1  # seconds after expiry for the reconciler's last look
LATE_SECONDS = 60  # how late the bank reports the late payment
# How each demo collection is paid: the amount asked for times this, or a fixed case.
PAYMENTS = ("exact", "exact", "exact", "exact", "over", "under", "late", "never")


@dataclass
class CollectionFigures:
    """What the demo's collections came to (the summary table shows them)."""

    created: int = 0
    confirmed: int = 0
    received: int = 0
    unsettled: int = 0


def _paid(amount: int, how: str) -> int | None:
    """The amount the customer pays for `how` (None: never pays)."""
    return {
        "exact": amount,
        "late": amount,
        "over": amount + 50_000,  # ₦500 too much
        "under": amount - 50_000,  # ₦500 short
    }.get(how)


def collect(engine: Engine, settings: Settings, sandbox_url: str, faults: str, seed: int) -> int:
    """Create the demo's collections through the real path (intent first) and have the
    sandbox's customers pay them; how many were created."""
    rng = random.Random(seed + 1)
    normal = parse_faults(faults).as_dict()
    with make_client(settings) as client, httpx.Client() as control:
        for index, how in enumerate(PAYMENTS):
            amount = rng.randrange(500_000, 10_000_000, 100)  # ₦5,000 to ₦100,000
            reference = f"COLLECT-{seed}-{index:02d}-{how}"
            request = CollectionRequest(reference=reference, amount=amount)
            create_collection(engine, client, request, now=utcnow())
            paid = _paid(amount, how)
            if paid is None:
                continue
            if how == "late":  # the bank reports this payment after the account expired
                late = {"collection_late": 1.0, "collection_late_seconds": LATE_SECONDS}
                control.post(f"{sandbox_url}/_sandbox/faults", json={**normal, **late})
            control.post(
                f"{sandbox_url}/_sandbox/collections/{reference}/pay", json={"amount": paid}
            ).raise_for_status()
            if how == "late":
                control.post(f"{sandbox_url}/_sandbox/faults", json=normal)
    return len(PAYMENTS)


def collection_figures(engine: Engine) -> CollectionFigures:
    """Created, confirmed, money received, and how many still wait for a look (not flagged)."""
    with read_session(engine) as session:
        flagged = select(col(Finding.subject_id)).where(
            col(Finding.resolved_at).is_(None), col(Finding.subject) == Subject.COLLECTION.value
        )
        created, confirmed, received = session.execute(
            select(
                func.count(),
                func.count().filter(col(Collection.confirmed).is_(True)),
                func.coalesce(
                    func.sum(col(Collection.amount_paid)).filter(
                        col(Collection.status) == "successful"
                    ),
                    0,
                ),
            ).select_from(Collection)
        ).one()
        unsettled = session.execute(
            select(func.count())
            .select_from(Collection)
            .where(
                or_(
                    col(Collection.confirmed).is_(False), col(Collection.next_check_at).is_not(None)
                ),
                col(Collection.id).not_in(flagged),
            )
        ).scalar_one()
    return CollectionFigures(int(created), int(confirmed), int(received), int(unsettled))
