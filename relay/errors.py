"""The relay's error tree: everything it raises on purpose is a RelayError.

RelayError
├── RelayConfigError          a PAYRECON_RELAY_* setting is missing or malformed
│   ├── SecretKeyError        no key to seal or open an endpoint's secret
│   └── ScheduleError         PAYRECON_RELAY_RETRY_SCHEDULE is not a list of durations
├── EndpointInputError        an endpoint's URL, types or description is not acceptable
│   └── EndpointAddressError  its host is one of the host's own addresses (loopback, …)
├── DestinationRefusedError   at send time, the endpoint's host resolved to such an address
├── StreamMissingError        at send time, no JetStream stream takes the endpoint's subject
├── RotationError             the configured keys cannot open the secret a rotation replaces
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


class EndpointAddressError(EndpointInputError):
    """An endpoint's host is, in any spelling, a loopback, link-local, unspecified, multicast
    or reserved address outside PAYRECON_RELAY_ALLOW_NETWORKS (docs/rules.md: Robustness rules)."""


class DestinationRefusedError(RelayError):
    """At send time the endpoint's host resolved to an address the relay does not connect to
    (or did not resolve at all); the attempt fails with this message and nothing is sent."""


class StreamMissingError(RelayError):
    """No JetStream stream takes the endpoint's subject (or not the stream its URL names): the
    attempt fails with this message and is retried on the schedule."""


class RotationError(RelayError):
    """A secret rotation was refused: no configured key opens the endpoint's current secret, so
    the old secret could not keep signing beside the new one."""


class EndpointNotFoundError(RelayError):
    """No endpoint (or no event, or no delivery) with that id."""


class ScheduleError(RelayConfigError):
    """PAYRECON_RELAY_RETRY_SCHEDULE is not a comma list of durations such as `5s,5m,2h`."""


class DeliveryStateError(RelayError):
    """A delivery cannot be retried: it was delivered already, or its endpoint was removed."""
