"""The relay's error tree: everything it raises on purpose is a RelayError.

RelayError
├── RelayConfigError          a PAYRECON_RELAY_* setting is missing or malformed
│   ├── SecretKeyError        no key to seal or open an endpoint's secret
│   └── ScheduleError         PAYRECON_RELAY_RETRY_SCHEDULE is not a list of durations
├── EndpointInputError        an endpoint's URL, types or description is not acceptable
├── EndpointNotFoundError     no endpoint, event or delivery with that id
└── DeliveryStateError        a delivery that cannot be retried (delivered, endpoint removed)
"""

from __future__ import annotations


class RelayError(Exception):
    """Base of every error the relay raises on purpose."""


class RelayConfigError(RelayError):
    """A relay setting is missing or malformed (PAYRECON_RELAY_*); the message names it."""


class SecretKeyError(RelayConfigError):
    """No PAYRECON_RELAY_KEYS to seal or open an endpoint's secret, or none of them opens it."""


class EndpointInputError(RelayError):
    """An endpoint's URL, event types or description is not acceptable; the message says why
    and `field` (`url`, `events`, `description`) which one."""

    def __init__(self, message: str, *, field: str = "url") -> None:
        super().__init__(message)
        self.field = field


class EndpointNotFoundError(RelayError):
    """No endpoint (or no event, or no delivery) with that id."""


class ScheduleError(RelayConfigError):
    """PAYRECON_RELAY_RETRY_SCHEDULE is not a comma list of durations such as `5s,5m,2h`."""


class DeliveryStateError(RelayError):
    """A delivery cannot be retried: it was delivered already, or its endpoint was removed."""
