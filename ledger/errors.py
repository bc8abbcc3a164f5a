"""Errors of the ledger.

LedgerError
├── DatabaseUnavailableError   the database cannot be reached or cannot take the write
├── ConflictError              a write contradicts what the ledger already holds
├── NoteError                  an acknowledgement note the ledger will not keep
└── NumberInputError           money (or another count) typed by a person is not a whole
                               number in range; also a ValueError
"""

from __future__ import annotations


class LedgerError(Exception):
    """Base of every error raised by the ledger package."""


class DatabaseUnavailableError(LedgerError):
    """The database is down, locked past the busy timeout, or refused the write."""


class ConflictError(LedgerError):
    """The write disagrees with an existing row (for example a different expected transfer)."""


class NoteError(LedgerError):
    """An acknowledgement note that is empty, too long, or holds characters no column takes."""


class NumberInputError(LedgerError, ValueError):
    """A number from a person (money, a cursor's id, a page size) that is not ASCII digits or
    a JSON integer in range; the message says what is wrong, the caller names the field."""
