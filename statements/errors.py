"""Errors of the statements package.

StatementError
├── StatementFormatError     the file is not a statement of the format asked for (or none
│                            could be recognised): nothing of it can be read
├── StatementTooLargeError   the file is larger than PAYRECON_STATEMENT_MAX_BYTES
├── FieldValueError          one field of one line (an amount, a date, a balance) cannot be
│                            read; the parsers turn it into an InvalidLine with its number
└── MappingError             a column mapping (TOML) is malformed or names columns the file
                             does not have
"""

from __future__ import annotations


class StatementError(Exception):
    """Base of every error raised by the statements package."""


class StatementFormatError(StatementError):
    """The file cannot be read as a statement of that format at all (not one bad line)."""


class StatementTooLargeError(StatementError):
    """The file is larger than the configured limit; it was refused before parsing."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"statement file is {size} bytes, larger than the limit of {limit}")
        self.size = size
        self.limit = limit


class FieldValueError(StatementError, ValueError):
    """One field's text is not a value of its kind (money with three decimals, a date that is
    not one); the message names the text and what is wrong, without the line number."""


class MappingError(StatementError):
    """A column mapping that cannot be used: bad TOML, unknown keys, missing columns."""
