"""The merchant's endpoints: add, list, enable, disable, remove, rotate the secret.

Every function works in the caller's session and never commits; the secret leaves this
module in clear only from `add` and `rotate_secret` (shown once) and `signing_secrets` (for
the worker).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
from collections.abc import Sequence
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlmodel import Session

from ledger.events.types import DEFAULT_TYPES, RelayEventType, parse_types
from ledger.models import RelayEndpoint
from ledger.types import takes_text
from relay import destinations
from relay.addresses import Network, host_refusal
from relay.destinations import Destination, Kind
from relay.errors import (
    EndpointAddressError,
    EndpointInputError,
    EndpointNotFoundError,
    RotationError,
    SecretKeyError,
)
from relay.keys import SecretBox, new_secret

MAX_URL_LENGTH = 2000
MAX_DESCRIPTION = 500
# After a rotation the old secret signs beside the new one this long (docs/rules.md: Relay).
ROTATION_OVERLAP = dt.timedelta(hours=24)


def check_url(url: str, *, allow: Sequence[Network]) -> str:
    """The URL as stored when it is an acceptable endpoint (a broker URL without its
    credentials); EndpointInputError says why not (check_destination)."""
    return check_destination(url, allow=allow).url


def check_destination(url: str, *, allow: Sequence[Network]) -> Destination:
    """The URL's destination (kind, URL without credentials, credentials, options) when it is
    an acceptable endpoint; EndpointInputError says why not.

    http:// is allowed (merchants' internal systems often listen on a private network and
    only operators set the URL); credentials in an HTTP URL are not (it authenticates payrecon
    by the signature), in a broker URL they are split off to be sealed. Each kind's options
    are checked by relay.destinations. A host that is one of the host's own addresses in any
    spelling (relay.addresses) is refused with EndpointAddressError unless it lies in `allow`
    (PAYRECON_RELAY_ALLOW_NETWORKS); DNS names are judged again when they are resolved, at
    every connection, brokers' too.
    """
    url = url.strip()
    if not url:
        raise EndpointInputError("the URL is empty")
    if len(url) > MAX_URL_LENGTH:
        raise EndpointInputError(f"the URL is longer than {MAX_URL_LENGTH} characters")
    if any(ord(char) < 33 or 127 <= ord(char) < 160 for char in url) or not takes_text(url):
        raise EndpointInputError("the URL holds a space or a control character")
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError when out of range or not a number
    except ValueError as exc:
        raise EndpointInputError(f"not a URL: {_without_userinfo(str(exc), url)}") from None
    try:
        destination = destinations.check(url)
    except ValueError as exc:
        raise EndpointInputError(str(exc)) from None
    if not parts.hostname:
        raise EndpointInputError("the URL has no host")
    if parts.fragment:
        raise EndpointInputError("the URL has a #fragment, which is never sent")
    if port == 0:
        raise EndpointInputError("the URL's port must be 1-65535")
    _check_host(parts.hostname, allow)
    return destination


def _without_userinfo(message: str, url: str) -> str:
    # A parse error may quote the netloc: never echo a password back.
    userinfo = url.partition("//")[2].partition("/")[0].rpartition("@")[0]
    return message.replace(userinfo, "***") if userinfo else message


def kind(endpoint: RelayEndpoint) -> Kind:
    """The endpoint's kind of destination, from its URL's scheme."""
    return destinations.kind_of(endpoint.url)


def connect_url(endpoint: RelayEndpoint, box: SecretBox) -> str:
    """The URL a transport connects to: the stored one with its sealed credentials opened
    (SecretKeyError when no configured key opens them). Never shown, never logged."""
    if endpoint.credentials_sealed is None:
        return endpoint.url
    return destinations.join_credentials(endpoint.url, box.open(endpoint.credentials_sealed))


def _check_host(host: str, allow: Sequence[Network]) -> None:
    refusal = host_refusal(host, allow)
    if refusal is not None:
        raise EndpointAddressError(
            f"{refusal}: payrecon does not send events into its own host "
            "(list the network in PAYRECON_RELAY_ALLOW_NETWORKS to allow it)"
        )
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not all(label and len(label) <= 63 for label in host.rstrip(".").split(".")):
            raise EndpointInputError(f"{host!r} is not a valid host name") from None


def _sealed(box: SecretBox | None, credentials: str | None) -> str | None:
    if credentials is None:
        return None
    if box is None:
        raise SecretKeyError("PAYRECON_RELAY_KEYS is needed to seal the URL's credentials")
    return box.seal(credentials)


def check_types(value: str | None) -> frozenset[RelayEventType]:
    """The types of a comma list (blank: the default set); EndpointInputError names an unknown
    one."""
    try:
        types = parse_types(value)
    except ValueError as exc:
        raise EndpointInputError(str(exc), field="events") from None
    if not types:
        # "," or " , " would make an endpoint that takes nothing at all.
        raise EndpointInputError("the event list names no type", field="events")
    return types


def types_column(types: frozenset[RelayEventType]) -> str | None:
    """What the ledger stores for a set of types: None for the default set."""
    if types == DEFAULT_TYPES:
        return None
    return ",".join(sorted(types))


def check_description(value: str | None) -> str | None:
    """The description, stripped; EndpointInputError when too long or not storable."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if len(value) > MAX_DESCRIPTION:
        raise EndpointInputError(
            f"the description is longer than {MAX_DESCRIPTION} characters", field="description"
        )
    if not takes_text(value):
        raise EndpointInputError(
            "the description holds a NUL or a character no database stores", field="description"
        )
    return value


def add(
    session: Session,
    box: SecretBox,
    *,
    url: str,
    types: str | None = None,
    description: str | None = None,
    now: dt.datetime,
    allow: Sequence[Network],
) -> tuple[RelayEndpoint, str]:
    """Create an enabled endpoint; it and its new `whsec_` secret (shown to the operator once).
    `allow` is PAYRECON_RELAY_ALLOW_NETWORKS (check_url)."""
    secret = new_secret()
    destination = check_destination(url, allow=allow)
    endpoint = RelayEndpoint(
        url=destination.url,
        credentials_sealed=_sealed(box, destination.credentials),
        description=check_description(description),
        event_types=types_column(check_types(types)),
        enabled=True,
        secret_sealed=box.seal(secret),
        created_at=now,
        updated_at=now,
    )
    session.add(endpoint)
    session.flush()
    return endpoint, secret


def audited_fields(endpoint: RelayEndpoint) -> dict[str, object]:
    """What an audit row of a change compares: the fields an operator sets."""
    return {
        "url": endpoint.url,
        "events": endpoint.event_types,  # None: the default set
        "description": endpoint.description,
        "enabled": endpoint.enabled,
    }


def change_detail(before: dict[str, object], after: dict[str, object]) -> str:
    """An audit detail of a change: each field that changed with its old and new value, as
    JSON (`{"url": {"old": …, "new": …}}`); `{}` when nothing did."""
    changed = {
        name: {"old": before[name], "new": after[name]}
        for name in before
        if before[name] != after.get(name)
    }
    return json.dumps(changed, ensure_ascii=False, separators=(",", ":"))


def get(session: Session, endpoint_id: int, *, for_update: bool = False) -> RelayEndpoint:
    """The endpoint (removed ones excluded); EndpointNotFoundError when there is none."""
    statement = select(RelayEndpoint).where(
        RelayEndpoint.id == endpoint_id,  # type: ignore[arg-type]
        RelayEndpoint.removed_at.is_(None),  # type: ignore[union-attr]
    )
    if for_update:
        statement = statement.with_for_update()
    endpoint: RelayEndpoint | None = session.execute(statement).scalar_one_or_none()
    if endpoint is None:
        raise EndpointNotFoundError(f"no endpoint {endpoint_id}")
    return endpoint


def listed(session: Session) -> list[RelayEndpoint]:
    """Every endpoint not removed, oldest first."""
    statement = (
        select(RelayEndpoint)
        .where(RelayEndpoint.removed_at.is_(None))  # type: ignore[union-attr]
        .order_by(RelayEndpoint.id)  # type: ignore[arg-type]
    )
    return list(session.execute(statement).scalars())


def set_enabled(
    session: Session,
    endpoint_id: int,
    enabled: bool,
    *,
    now: dt.datetime,
    reason: str | None = None,
) -> RelayEndpoint:
    """Enable or disable an endpoint. Enabling clears the failure streak, so its pending
    deliveries resume and the auto-disable clock starts again."""
    endpoint = get(session, endpoint_id, for_update=True)
    endpoint.enabled = enabled
    endpoint.disabled_reason = None if enabled else reason
    if enabled:
        endpoint.failing_since = None
    endpoint.updated_at = now
    return endpoint


def update(
    session: Session,
    endpoint_id: int,
    *,
    box: SecretBox | None = None,
    now: dt.datetime,
    url: str | None = None,
    types: str | None = None,
    description: str | None = None,
    allow: Sequence[Network],
) -> RelayEndpoint:
    """Change an endpoint's URL, types or description (None leaves one as it is); `allow` is
    PAYRECON_RELAY_ALLOW_NETWORKS (check_destination). A new URL replaces the credentials:
    `box` seals those of a broker URL (SecretKeyError without one)."""
    endpoint = get(session, endpoint_id, for_update=True)
    if url is not None:
        destination = check_destination(url, allow=allow)
        endpoint.url = destination.url
        endpoint.credentials_sealed = _sealed(box, destination.credentials)
    if types is not None:
        endpoint.event_types = types_column(check_types(types))
    if description is not None:
        endpoint.description = check_description(description)
    endpoint.updated_at = now
    return endpoint


def remove(session: Session, endpoint_id: int, *, now: dt.datetime) -> RelayEndpoint:
    """Remove an endpoint: it gets nothing more, its delivery history stays."""
    endpoint = get(session, endpoint_id, for_update=True)
    endpoint.removed_at = now
    endpoint.enabled = False
    endpoint.disabled_reason = "removed"
    endpoint.updated_at = now
    return endpoint


def rotate_secret(
    session: Session, box: SecretBox, endpoint_id: int, *, now: dt.datetime
) -> tuple[RelayEndpoint, str]:
    """A new secret for the endpoint; the old one keeps signing beside it for 24 h.

    RotationError, and nothing changed, when no configured key opens the current secret: the
    rotation would keep a secret nobody can sign with, and the endpoint would get unsigned
    (so no) attempts for 24 h (docs/rules.md: Robustness rules).
    """
    endpoint = get(session, endpoint_id, for_update=True)
    try:
        box.open(endpoint.secret_sealed)
    except SecretKeyError:
        raise RotationError(
            f"endpoint {endpoint_id}: no key in PAYRECON_RELAY_KEYS opens its current secret, "
            "so it could not keep signing beside a new one; put back the key that sealed it "
            "(then run `payrecon endpoints reseal`) before rotating"
        ) from None
    secret = new_secret()
    endpoint.previous_secret_sealed = endpoint.secret_sealed
    endpoint.previous_secret_until = now + ROTATION_OVERLAP
    endpoint.secret_sealed = box.seal(secret)
    endpoint.updated_at = now
    return endpoint, secret


def signing_secrets(endpoint: RelayEndpoint, box: SecretBox, *, now: dt.datetime) -> list[str]:
    """The secrets an attempt is signed with now: the current one, and the previous one while
    its 24 h of overlap last."""
    secrets = [box.open(endpoint.secret_sealed)]
    until = endpoint.previous_secret_until
    if endpoint.previous_secret_sealed is not None and until is not None and now < until:
        secrets.append(box.open(endpoint.previous_secret_sealed))
    return secrets


def reseal_all(session: Session, box: SecretBox, *, now: dt.datetime) -> int:
    """Seal every endpoint's secrets (removed ones too) again under the box's first key, so an
    old key can be dropped from PAYRECON_RELAY_KEYS; how many endpoints. SecretKeyError when no
    configured key opens one (nothing is changed then: the caller's transaction rolls back)."""
    rows = session.execute(select(RelayEndpoint).with_for_update()).scalars().all()
    for endpoint in rows:
        endpoint.secret_sealed = box.reseal(endpoint.secret_sealed)
        if endpoint.previous_secret_sealed is not None:
            endpoint.previous_secret_sealed = box.reseal(endpoint.previous_secret_sealed)
        if endpoint.credentials_sealed is not None:
            endpoint.credentials_sealed = box.reseal(endpoint.credentials_sealed)
        endpoint.updated_at = now
    return len(rows)
