"""Finding a transfer or a collection by either reference, the merchant's winning."""

from __future__ import annotations

from sqlalchemy import Engine

from ledger.db import read_session, write_session
from ledger.models import Collection, Transfer
from ledger.subjects import checkable_row, find_by_reference
from ledger.types import utcnow


def test_the_merchants_reference_wins_over_an_equal_provider_reference(engine: Engine) -> None:
    """`X` is one transfer's merchant reference and another's provider reference: the first
    is found; a provider reference alone finds its row; an unknown one finds nothing; the
    same holds for collections, which never answer for transfers."""
    now = utcnow()
    with write_session(engine) as session:
        for model, extra in ((Transfer, {}), (Collection, {"amount": 500})):
            session.add_all(
                [
                    model(**checkable_row(now=now, next_check_at=None, reference="X",
                                          provider_reference="P-1", origin="expected", **extra)),
                    model(**checkable_row(now=now, next_check_at=None, reference="Y",
                                          provider_reference="X", origin="expected", **extra)),
                ]
            )  # fmt: skip
    with read_session(engine) as session:
        for model in (Transfer, Collection):
            found = find_by_reference(session, model, "X")
            assert found is not None and isinstance(found, model) and found.reference == "X"
            by_provider = find_by_reference(session, model, "P-1", for_update=True)
            assert by_provider is not None and by_provider.reference == "X"
            assert find_by_reference(session, model, "nobody") is None
