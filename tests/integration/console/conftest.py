"""Console and workflow tests use the receiver fixtures (a real server over the test ledger)."""

from __future__ import annotations

from tests.support.apps import receiver_url, start_receiver

__all__ = ["receiver_url", "start_receiver"]
