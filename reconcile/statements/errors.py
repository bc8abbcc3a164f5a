"""Errors of the statements shell.

StatementShellError
├── InvalidStatementError   lines of the file cannot be read: nothing was stored (exit 2 /
│                           422); `invalid` lists each line's number and reason
├── AccountError            an account that does not exist, or exists with another kind
├── LineNotFoundError       no statement line has that id
└── MatchRefusedError       a hand match, unmatch or ignore that makes no sense (a credit to
                            a payout's debit, a line already matched, …); says why
"""

from __future__ import annotations


class StatementShellError(Exception):
    """Base of the statements shell's errors."""


class InvalidStatementError(StatementShellError):
    """The file has invalid lines and `--skip-invalid` was not given: nothing is stored."""

    def __init__(self, invalid: list[dict[str, object]], total: int) -> None:
        first = invalid[0] if invalid else {"line": "?", "reason": "?"}
        super().__init__(
            f"{total} invalid line{'' if total == 1 else 's'} (first: line {first['line']}: "
            f"{first['reason']}); nothing was stored"
        )
        self.invalid = invalid
        self.total = total


class AccountError(StatementShellError):
    """No such account, or the account exists with the other kind."""


class LineNotFoundError(StatementShellError):
    """No statement line has the id given."""


class MatchRefusedError(StatementShellError):
    """A change to a line that is refused, with the reason in the message."""
