"""The relay's error tree: everything it raises on purpose is a RelayError."""

from __future__ import annotations


class RelayError(Exception):
    """Base of every error the relay raises on purpose."""


class RelayConfigError(RelayError):
    """A relay setting is missing or malformed (PAYRECON_RELAY_*); the message names it."""


class SecretKeyError(RelayConfigError):
    """No PAYRECON_RELAY_KEYS to seal or open an endpoint's secret, or none of them opens it."""


class EndpointInputError(RelayError):
    """An endpoint's URL, event types or description is not acceptable; the message says why."""


class EndpointNotFoundError(RelayError):
    """No endpoint (or no event, or no delivery) with that id."""


class ScheduleError(RelayConfigError):
    """PAYRECON_RELAY_RETRY_SCHEDULE is not a comma list of durations such as `5s,5m,2h`."""
