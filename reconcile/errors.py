"""Errors of the reconcile package (reconciler passes, the runner lease, alerts).

ReconcileError
├── ProviderKeyRefusedError        a reconcile pass stopped: the provider refused the key
├── ProviderMisconfiguredError     a reconcile pass stopped: no answer came from the provider
├── LeaseHeldError                 another reconciler holds the SQLite runner lease
└── AlertURLError                  an alert URL is refused by the outbound policy
"""

from __future__ import annotations


class ReconcileError(Exception):
    """Base of every error raised by the reconcile package."""


class ProviderKeyRefusedError(ReconcileError):
    """The provider answered 401 to a lookup: the key is wrong, expired or of the wrong env."""


class ProviderMisconfiguredError(ReconcileError):
    """Every lookup of a pass got an answer not in the provider's format: the base URL is
    wrong (another server, a wrong path, a redirect)."""


class LeaseHeldError(ReconcileError):
    """Another reconciler runs against this SQLite ledger."""

    def __init__(self, owner: str, until: str) -> None:
        super().__init__(f"another reconciler ({owner}) holds the ledger lease until {until}")
        self.owner = owner
        self.until = until


class AlertURLError(ReconcileError):
    """An alert URL breaks the outbound policy (plain http, loopback or private host)."""
