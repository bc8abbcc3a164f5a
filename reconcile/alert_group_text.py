"""What grouped, suppressed and resolved alerts say: plain language for finance, naira, pure.

Alerts name references (the merchant's, an endpoint's host), never internal ids, and every
time says its zone (README "Alerts").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from urllib.parse import urlencode

from reconcile.advice import what_to_do
from reconcile.reports.naira import naira

FIRST_REFERENCES = 10
LAGOS = dt.timezone(dt.timedelta(hours=1))  # West Africa Time all year: no daylight saving


def when(value: dt.datetime) -> str:
    """A time for people, saying its zone: `2026-03-01 09:00 UTC (10:00 Lagos)`."""
    utc = value.astimezone(dt.UTC)
    return f"{utc:%Y-%m-%d %H:%M} UTC ({utc.astimezone(LAGOS):%H:%M} Lagos)"


def _label(kind: str) -> str:
    return kind.replace("_", " ")


def findings_link(console_url: str | None, kind: str | None = None) -> str:
    """Where to see the findings: the console's queue when its address is known, else the CLI."""
    if console_url:
        query = {"state": "open", **({"kind": kind} if kind else {})}
        return f"{console_url}/console/findings?{urlencode(query)}"
    return "payrecon findings list --open" + (f" --kind {kind}" if kind else "")


def _references(references: Sequence[str | None], total: int) -> str:
    named = [ref for ref in references if ref][:FIRST_REFERENCES]
    more = total - len(named)
    return ", ".join(named) + (f" and {more:,} more" if more > 0 else "")


def grouped_alert(
    kind: str,
    *,
    noun: str,
    references: Sequence[str | None],
    at_stake: int,
    console_url: str | None,
    finding: bool = True,
) -> tuple[str, str]:
    """The (title, body) of one message for many findings (or notices) of one kind."""
    count = len(references)
    title = f"payrecon: {count:,} × {_label(kind)} ({noun}s)"
    lines = [f"What happened: {count:,} {_label(kind)} alerts at once, sent as one message."]
    if finding:
        lines.append(f"Money at stake: {naira(at_stake)} in total.")
    lines.append(f"First {noun}s: {_references(references, count)}.")
    if finding:
        lines.append(f"See them all: {findings_link(console_url, kind)}")
        lines.append(f"What to do: {what_to_do(kind)}")
    elif console_url:
        lines.append(f"See them all: {console_url}/console")
    return title, "\n".join(lines)


def suppressed_alert(
    count: int, *, hour_ends: dt.datetime, cap: int, console_url: str | None
) -> tuple[str, str]:
    """The (title, body) of the hour's one message once `cap` messages went out."""
    return (
        "payrecon: alerts suppressed — too many this hour",
        f"What happened: more than {cap:,} alert messages this hour "
        "(PAYRECON_ALERT_MAX_PER_HOUR), so "
        f"{count:,} findings are not announced one by one. Until {when(hour_ends)} further "
        "findings are recorded in the ledger without a message.\n"
        f"See the console: {findings_link(console_url)}",
    )


def resolved_alert(
    kind: str,
    *,
    noun: str,
    references: Sequence[str | None],
    alerted_at: dt.datetime,
    console_url: str | None,
) -> tuple[str, str]:
    """The (title, body) saying every finding of one earlier message is resolved."""
    count = len(references)
    if count == 1:
        title = f"payrecon: resolved — {kind} on {noun} {references[0] or '?'}"
        what = f"The {_label(kind)} alerted at {when(alerted_at)} has resolved"
    else:
        title = f"payrecon: resolved — {count:,} × {_label(kind)} ({noun}s)"
        what = f"All {count:,} {_label(kind)} findings alerted at {when(alerted_at)} have resolved"
    return title, (
        f"What happened: {what}: the provider's records and the ledger now agree.\n"
        f"{noun.capitalize()}s: {_references(references, count)}.\n"
        "What to do: nothing more for these."
        + (f"\nConsole: {findings_link(console_url)}" if console_url else "")
    )


def resolved_many_alert(titles: Sequence[str], *, console_url: str | None) -> tuple[str, str]:
    """The (title, body) of one message for many resolved notices at once."""
    shown = "\n".join(
        f"- {title.removeprefix('payrecon: ')}" for title in titles[:FIRST_REFERENCES]
    )
    more = len(titles) - FIRST_REFERENCES
    return (
        f"payrecon: {len(titles):,} earlier alerts resolved",
        f"What happened: the findings of {len(titles):,} earlier alerts have all resolved.\n"
        f"{shown}" + (f"\n- and {more:,} more" if more > 0 else "") + "\nWhat to do: nothing more "
        "for these." + (f"\nConsole: {findings_link(console_url)}" if console_url else ""),
    )
