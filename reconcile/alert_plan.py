"""Which messages a dispatch sends: findings grouped by kind, and the hourly storm guard, pure.

README "Alerts": within one dispatch (a reconciler pass, or one batch of the relay's
notices) the findings of one kind beyond `PAYRECON_ALERT_GROUP_AFTER` go out as one grouped
message; at most `PAYRECON_ALERT_MAX_PER_HOUR` messages go out in a clock hour, and the rest
of that hour's findings are summed up in one "alerts suppressed" message.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

DEFAULT_GROUP_AFTER = 5
DEFAULT_MAX_PER_HOUR = 60


@dataclass(frozen=True)
class AlertRules:
    """How alerts group (PAYRECON_ALERT_GROUP_AFTER, _MAX_PER_HOUR, _RESOLVED, CONSOLE_URL)."""

    group_after: int = DEFAULT_GROUP_AFTER
    max_per_hour: int = DEFAULT_MAX_PER_HOUR
    resolved: bool = True
    console_url: str | None = None


class AlertSettings(Protocol):
    """The settings alerts group by (payrecon.settings.Settings has them)."""

    @property
    def alert_group_after(self) -> int: ...
    @property
    def alert_max_per_hour(self) -> int: ...
    @property
    def alert_resolved(self) -> bool: ...
    @property
    def console_url(self) -> str | None: ...


def rules_of(settings: AlertSettings) -> AlertRules:
    """The rules from PAYRECON_ALERT_GROUP_AFTER, _MAX_PER_HOUR, _RESOLVED and CONSOLE_URL."""
    return AlertRules(
        group_after=settings.alert_group_after,
        max_per_hour=settings.alert_max_per_hour,
        resolved=settings.alert_resolved,
        console_url=settings.console_url,
    )


@dataclass(frozen=True)
class Item:
    """One thing to alert: a finding at one step, or a keyed notice (relay, job failure)."""

    key: str
    kind: str  # what groups it: a finding kind, or a notice kind
    title: str
    body: str
    finding_id: int | None = None
    step: int = 0
    reference: str | None = None  # what it names for people: a reference, an endpoint's host
    at_stake: int = 0  # kobo
    noun: str = "transfer"  # what the reference is of: transfer, collection, endpoint…


@dataclass
class Message:
    """One message to send, and the items it carries (one, or a group of one kind)."""

    items: list[Item]
    grouped: bool = False

    @property
    def kind(self) -> str:
        """The kind of its items."""
        return self.items[0].kind


@dataclass
class Plan:
    """What a dispatch sends, and what the storm guard held back."""

    messages: list[Message] = field(default_factory=list)
    suppressed: list[Item] = field(default_factory=list)


def plan(items: Sequence[Item], rules: AlertRules, *, sent_this_hour: int) -> Plan:
    """Group `items` by kind (more than `group_after` of a kind: one message for them all),
    then keep as many messages as the hour's budget allows; the rest's items are suppressed.

    Messages keep the order of their kinds' first items, so the first findings raised are the
    first announced.
    """
    by_kind: dict[str, list[Item]] = {}
    for item in items:
        by_kind.setdefault(item.kind, []).append(item)
    messages: list[Message] = []
    for group in by_kind.values():
        if len(group) > rules.group_after:
            messages.append(Message(group, grouped=True))
        else:
            messages.extend(Message([item]) for item in group)
    budget = max(0, rules.max_per_hour - sent_this_hour)
    kept, held = messages[:budget], messages[budget:]
    return Plan(kept, [item for message in held for item in message.items])
