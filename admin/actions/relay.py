"""Relay actions: endpoint changes (add, patch, enable/disable, remove, rotate-secret, reseal),
retrying a delivery and replaying events (docs/rules.md: Relay). The relay's own errors are
translated here, once, into the admin tree."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from admin.actions.actor import Actor, audit
from admin.errors import (
    AddressRefusedError,
    ConflictError,
    InvalidError,
    NotFoundError,
    UnavailableError,
)
from ledger.audit import AuditAction
from ledger.events.types import RelayEventType
from ledger.models import RelayEndpoint
from reconcile.reports.errors import PeriodError
from reconcile.reports.period import lagos_midnight_utc, parse_day
from relay import endpoints as ops
from relay import queries
from relay.addresses import Network
from relay.errors import (
    DeliveryStateError,
    EndpointAddressError,
    EndpointInputError,
    EndpointNotFoundError,
    RotationError,
    SecretKeyError,
)
from relay.keys import SecretBox
from relay.replay import queue_again

DISABLED_BY_OPERATOR = "disabled by an operator"


@contextlib.contextmanager
def relay_errors() -> Iterator[None]:
    """The relay package's errors as the admin tree's (the one place they are translated)."""
    try:
        yield
    except EndpointNotFoundError as exc:
        raise NotFoundError(str(exc)) from exc
    except EndpointAddressError as exc:
        raise AddressRefusedError(exc.field, str(exc)) from exc
    except EndpointInputError as exc:
        raise InvalidError(exc.field, str(exc)) from exc
    except (DeliveryStateError, RotationError) as exc:
        raise ConflictError(str(exc)) from exc
    except SecretKeyError as exc:
        raise UnavailableError(str(exc), code="relay_not_configured") from exc


def secret_box(settings: Any) -> SecretBox:
    """The box sealing endpoints' secrets (PAYRECON_RELAY_KEYS); UnavailableError without it."""
    with relay_errors():
        box: SecretBox = settings.secret_box()
    return box


def check_endpoint(
    url: str | None, events: str | None, description: str | None, *, allow: tuple[Network, ...]
) -> None:
    """Check an endpoint's fields before anything is opened (InvalidError naming the field);
    the URL's rule is the relay's one check (relay.endpoints.check_destination, per kind of
    destination: HTTP or a broker)."""
    with relay_errors():
        if url is not None:
            ops.check_destination(url, allow=allow)
        ops.check_types(events)
        ops.check_description(description)


def _subject(endpoint_id: int | None) -> str:
    return f"endpoint:{endpoint_id}"


def add_endpoint(
    session: Session,
    actor: Actor,
    box: SecretBox,
    *,
    url: str,
    events: str | None,
    description: str | None,
    allow: tuple[Network, ...],
    now: dt.datetime,
) -> tuple[RelayEndpoint, str]:
    """Add an endpoint; (it, its whsec_ secret, to be shown this once)."""
    with relay_errors():
        endpoint, secret = ops.add(
            session, box, url=url, types=events, description=description, now=now, allow=allow
        )
    audit(session, actor, AuditAction.ENDPOINT_ADD, _subject(endpoint.id), endpoint.url, now=now)
    return endpoint, secret


@dataclass(frozen=True)
class EndpointChanges:
    """What an operator changes of an endpoint: None leaves a field as it is."""

    url: str | None = None
    events: str | None = None  # comma list for relay.endpoints ("" the default set)
    description: str | None = None  # "" clears it
    enabled: bool | None = None


def update_endpoint(
    session: Session,
    actor: Actor,
    endpoint_id: int,
    changes: EndpointChanges,
    *,
    box: SecretBox | None = None,
    allow: tuple[Network, ...],
    now: dt.datetime,
) -> RelayEndpoint:
    """Change an endpoint's fields and enable or disable it; audited with the old and the new
    value of each field that changed (docs/rules.md: Robustness rules)."""
    with relay_errors():
        before = ops.audited_fields(ops.get(session, endpoint_id, for_update=True))
        endpoint = ops.update(
            session,
            endpoint_id,
            now=now,
            box=box,
            url=changes.url,
            types=changes.events,
            description=changes.description,
            allow=allow,
        )
        if changes.enabled is not None and changes.enabled != endpoint.enabled:
            reason = None if changes.enabled else DISABLED_BY_OPERATOR
            endpoint = ops.set_enabled(
                session, endpoint_id, changes.enabled, now=now, reason=reason
            )
    detail = ops.change_detail(before, ops.audited_fields(endpoint))
    audit(session, actor, AuditAction.ENDPOINT_UPDATE, _subject(endpoint_id), detail, now=now)
    return endpoint


def set_enabled(
    session: Session, actor: Actor, endpoint_id: int, enabled: bool, *, now: dt.datetime
) -> RelayEndpoint:
    """Enable (which also clears the failure streak, even of an enabled endpoint) or disable
    an endpoint; audited as an update."""
    with relay_errors():
        before = ops.audited_fields(ops.get(session, endpoint_id, for_update=True))
        reason = None if enabled else DISABLED_BY_OPERATOR
        endpoint = ops.set_enabled(session, endpoint_id, enabled, now=now, reason=reason)
    detail = ops.change_detail(before, ops.audited_fields(endpoint))
    audit(session, actor, AuditAction.ENDPOINT_UPDATE, _subject(endpoint_id), detail, now=now)
    return endpoint


def remove_endpoint(
    session: Session, actor: Actor, endpoint_id: int, *, now: dt.datetime
) -> RelayEndpoint:
    """Remove an endpoint: it gets nothing more; its delivery history stays."""
    with relay_errors():
        removed = ops.remove(session, endpoint_id, now=now)
    audit(session, actor, AuditAction.ENDPOINT_REMOVE, _subject(endpoint_id), now=now)
    return removed


def rotate_secret(
    session: Session, actor: Actor, box: SecretBox, endpoint_id: int, *, now: dt.datetime
) -> tuple[RelayEndpoint, str]:
    """A new secret for the endpoint (shown this once); the old one signs beside it for 24 h."""
    with relay_errors():
        endpoint, secret = ops.rotate_secret(session, box, endpoint_id, now=now)
    audit(session, actor, AuditAction.ENDPOINT_ROTATE, _subject(endpoint_id), now=now)
    return endpoint, secret


def reseal(session: Session, actor: Actor, box: SecretBox, *, now: dt.datetime) -> int:
    """Seal every endpoint's secrets again with the first key; how many endpoints."""
    with relay_errors():
        count = ops.reseal_all(session, box, now=now)
    detail = f"{count} endpoint(s) sealed again with the first key"
    audit(session, actor, AuditAction.ENDPOINT_RESEAL, None, detail, now=now)
    return count


def retry_delivery(
    session: Session, actor: Actor, delivery_id: int, *, now: dt.datetime
) -> dict[str, Any]:
    """A pending or failed delivery is due now; ConflictError when it cannot be retried."""
    with relay_errors():
        answer = queries.retry_delivery(session, delivery_id, now=now)
    audit(session, actor, AuditAction.DELIVERY_RETRY, f"delivery:{delivery_id}", now=now)
    return answer


@dataclass(frozen=True)
class ReplayFilters:
    """Which events to queue again: None means any."""

    endpoint_id: int | None = None
    type: str | None = None  # an event type's name
    since: str | None = None  # a Lagos day, YYYY-MM-DD
    failed_only: bool = False

    def detail(self, queued: int) -> str:
        """The audit detail: one format whoever replays."""
        return (
            f"{queued} queued; type={self.type or 'any'} since={self.since or 'any'} "
            f"failed_only={self.failed_only}"
        )


def replay(session: Session, actor: Actor, filters: ReplayFilters, *, now: dt.datetime) -> int:
    """Queue the events `filters` select again (same event ids) as new pending deliveries;
    InvalidError for an unknown type or a bad day, NotFoundError for an unknown endpoint."""
    event_type = None
    if filters.type:
        try:
            event_type = RelayEventType(filters.type.strip())
        except ValueError:
            known = ", ".join(sorted(RelayEventType))
            raise InvalidError(
                "type", f"unknown event type {filters.type!r} (known: {known})"
            ) from None
    since = None
    if filters.since:
        try:
            since = lagos_midnight_utc(parse_day(filters.since, option="--since"))
        except PeriodError as exc:
            raise InvalidError("since", str(exc)) from None
    with relay_errors():
        queued = queue_again(
            session,
            now=now,
            endpoint_id=filters.endpoint_id,
            type=event_type,
            since=since,
            failed_only=filters.failed_only,
        )
    subject = None if filters.endpoint_id is None else _subject(filters.endpoint_id)
    audit(session, actor, AuditAction.RELAY_REPLAY, subject, filters.detail(queued), now=now)
    return queued
