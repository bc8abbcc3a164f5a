"""Errors of the ledger.

LedgerError
├── DatabaseUnavailableError   the database cannot be reached or cannot take the write
├── SchemaError                the database is not at the revision this code needs
├── ConflictError              a write contradicts what the ledger already holds
├── NoteError                  an acknowledgement note the ledger will not keep
├── NotReversibleError         a reversal of a transfer that is not a confirmed success
├── LeaseHeldError             another runner holds a named lease (ledger.lease)
├── OperatorError              an operator that cannot be added or found (ledger.operators)
│   ├── OperatorNameError      the name is not one an operator may have
│   ├── OperatorExistsError    an operator of that name exists (revoked ones too)
│   └── OperatorNotFoundError  no active operator of that name
└── NumberInputError           money (or another count) typed by a person is not a whole
                               number in range; also a ValueError
"""

from __future__ import annotations


class LedgerError(Exception):
    """Base of every error raised by the ledger package."""


class DatabaseUnavailableError(LedgerError):
    """The database is down, locked past the busy timeout, or refused the write."""


class SchemaError(LedgerError):
    """The ledger's migration revision is not the one this code was written for."""

    def __init__(self, current: str | None, head: str, *, known: bool) -> None:
        at = current or "base"
        if known:
            message = f"database not migrated (at {at}, need {head}): run payrecon db upgrade"
        else:
            # A newer payrecon migrated it: running this older code against it is not safe.
            message = (
                f"database at revision {at}, which this payrecon does not know (it needs "
                f"{head}): run the payrecon version that migrated it"
            )
        super().__init__(message)
        self.current = current
        self.head = head
        self.behind = known


class ConflictError(LedgerError):
    """The write disagrees with an existing row (for example a different expected transfer)."""


class NoteError(LedgerError):
    """An acknowledgement note that is empty, too long, or holds characters no column takes."""


class NotReversibleError(LedgerError):
    """Only a transfer the provider confirmed successful can be reversed (ledger.reversals)."""


class LeaseHeldError(LedgerError):
    """Another runner holds the named lease until it expires."""

    def __init__(self, name: str, owner: str, until: str) -> None:
        super().__init__(f"another runner ({owner}) holds the {name} lease until {until}")
        self.name = name
        self.owner = owner
        self.until = until


class NumberInputError(LedgerError, ValueError):
    """A number from a person (money, a cursor's id, a page size) that is not ASCII digits or
    a JSON integer in range; the message says what is wrong, the caller names the field."""


class OperatorError(LedgerError):
    """An operator cannot be added, found or revoked."""


class OperatorNameError(OperatorError):
    """The name is empty, too long, or has characters an operator name may not have."""


class OperatorExistsError(OperatorError):
    """An operator of that name exists already (a revoked name is not reused)."""


class OperatorNotFoundError(OperatorError):
    """No active operator has that name."""
