"""Errors of the reports package.

ReportError            base of everything raised while building or rendering a report
├── PeriodError        a `--since`/`--until` value is not a YYYY-MM-DD day, or since > until
└── OutputError        the chosen format cannot be written where asked (xlsx to stdout)
"""

from __future__ import annotations


class ReportError(Exception):
    """Base of every error raised by the reports package."""


class PeriodError(ReportError):
    """The period given by the user is not valid; the message names the bad value."""


class OutputError(ReportError):
    """The report cannot be written to the requested destination."""
