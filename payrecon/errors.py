"""Errors of the composition root.

PayreconError
├── ConfigError          a setting is missing, malformed or contradicts another (exit 2)
└── DemoDirectoryError   `payrecon demo --directory` names a place it cannot write (exit 2)
"""

from __future__ import annotations


class PayreconError(Exception):
    """Base of every error raised by the `payrecon` package."""


class ConfigError(PayreconError):
    """A setting is missing or wrong; the message names the variable."""

    def __init__(self, variable: str, reason: str) -> None:
        super().__init__(f"{variable}: {reason}")
        self.variable = variable
        self.reason = reason


class DemoDirectoryError(PayreconError):
    """The demo's directory cannot be created or written; the message names the path."""

    def __init__(self, directory: str, reason: str) -> None:
        super().__init__(f"cannot use {directory} as the demo directory: {reason}")
        self.directory = directory
        self.reason = reason
