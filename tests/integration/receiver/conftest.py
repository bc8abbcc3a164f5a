"""A real receiver on a free loopback port, over the parametrized test database."""

from __future__ import annotations

from tests.support.apps import (  # noqa: F401 (fixtures)
    ADMIN,
    StartReceiver,
    payout_stack,
    receiver_url,
    stack,
    start_receiver,
)
