"""Alerts: claimed in the ledger first (unique `Alert.key`), then sent through apprise.

An alert is one row of `alert`; its key (`finding:{id}:{opened}:{step}`) is
inserted with ON CONFLICT DO NOTHING and only the process whose insert wins
sends it, so a restart or a second reconciler never repeats one. A crash
between the claim and the send loses that alert rather than doubling it (the
row stays `sending`, visible to operators). Acknowledged findings do not alert.

Within one dispatch, findings of one kind beyond PAYRECON_ALERT_GROUP_AFTER go out as one
grouped message, and past PAYRECON_ALERT_MAX_PER_HOUR messages in a clock hour the rest are
summed up in one "suppressed" message (`reconcile.alert_plan`; the bookkeeping is
`reconcile.alert_book`). A message whose findings all resolve gets one resolved notice.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog
from sqlalchemy import Engine, select
from sqlmodel import Session, col

from ledger.db import read_session, write_session
from ledger.events.types import Subject
from ledger.figures import amount_at_stake
from ledger.models import Alert, Collection, Finding, StatementAccount, StatementLine, Transfer
from ledger.subjects import about
from ledger.types import FindingKind
from reconcile import alert_book as book
from reconcile.alert_group_text import (
    grouped_alert,
    resolved_alert,
    resolved_many_alert,
    suppressed_alert,
)
from reconcile.alert_plan import AlertRules, Item, plan
from reconcile.alert_sink import AlertSink, AppriseSink, check_alert_url
from reconcile.alert_text import (
    TransferFacts,
    collection_alert,
    finding_alert,
    key_refused_alert,
    line_alert,
)
from reconcile.checks import Policy

logger = structlog.get_logger(__name__)
_FINDINGS = Finding.__table__.c  # type: ignore[attr-defined]

__all__ = ["AlertSink", "AppriseSink", "check_alert_url", "dispatch_alerts", "send_keyed_alert"]

STALE_STEPS = (1, 4, 24)  # multiples of PAYRECON_STALE_AFTER at which stale_pending escalates


def _stale_step(age_seconds: float, stale_after: int) -> int:
    return sum(1 for multiple in STALE_STEPS if age_seconds >= multiple * stale_after)


def _facts(transfer: Transfer) -> TransferFacts:
    return TransferFacts(
        reference=transfer.reference,
        provider_reference=transfer.provider_reference,
        status=transfer.status,
        confirmed=transfer.confirmed,
        amount=transfer.amount,
        fee=transfer.fee,
        provider_amount=transfer.provider_amount,
        provider_fee=transfer.provider_fee,
        webhook_amount=transfer.webhook_amount,
        webhook_fee=transfer.webhook_fee,
    )


_PAGE = 2000  # findings per streamed partition: the candidates read holds one of ORM rows


def _queries(*where: Any) -> tuple[tuple[Any, Any], ...]:
    # The findings meeting `where` with their subjects, one statement per kind of subject,
    # each with the builder of its items.
    on_transfers = (
        select(Finding, Transfer)
        .join(Transfer, about(_FINDINGS, Subject.TRANSFER, col(Transfer.id)))
        .where(*where)
    )
    on_collections = (
        select(Finding, Collection)
        .join(Collection, about(_FINDINGS, Subject.COLLECTION, col(Collection.id)))
        .where(*where)
    )
    on_lines = (
        select(Finding, StatementLine, StatementAccount.name)  # type: ignore[call-overload]
        .join(StatementLine, about(_FINDINGS, Subject.STATEMENT_LINE, col(StatementLine.id)))
        .join(StatementAccount, col(StatementAccount.id) == col(StatementLine.account_id))
        .where(*where)
    )
    return (
        (on_transfers, _transfer_item),
        (on_collections, _collection_item),
        (on_lines, _line_item),
    )


def _candidates(engine: Engine, *, now: dt.datetime, policy: Policy) -> list[Item]:
    # Read page by page (one streamed statement per kind of subject) so that only one page
    # of ORM objects is alive at a time (the identity map holds them weakly): a storm of
    # 200,000 findings used to load them all at once (issue 25). The items are not worded
    # yet: most go out in a grouped message, which names only their references, so only
    # those sent on their own are worded (`_worded`), after the plan.
    queries = _queries(col(Finding.resolved_at).is_(None), col(Finding.acknowledged_at).is_(None))
    wanted: list[Item] = []
    with read_session(engine) as session:
        for query, build in queries:
            for page in _pages(session, query):
                taken = _taken(session, [row[0].id for row in page])
                for row in page:
                    item = build(row, now=now, policy=policy, worded=False)
                    if item.key not in taken:
                        wanted.append(item)
    # Findings in the order they were raised, whatever they are about.
    wanted.sort(key=lambda item: item.finding_id or 0)
    return wanted


def _worded(
    session: Session, items: Sequence[Item], *, now: dt.datetime, policy: Policy
) -> dict[str, Item]:
    """`items` (findings' items from `_candidates`) with their title and body, by key; an item
    whose finding is gone meanwhile keeps its plain one."""
    ids = [item.finding_id for item in items if item.finding_id is not None]
    worded: dict[str, Item] = {}
    if not ids:
        return worded
    for query, build in _queries(col(Finding.id).in_(ids)):
        for row in session.execute(query):
            item = build(row, now=now, policy=policy, worded=True)
            worded[item.key] = item
    return worded


def _pages(session: Session, query: Any) -> Iterator[Sequence[Any]]:
    # One statement, streamed (a server-side cursor on PostgreSQL) in pages of _PAGE rows: a
    # keyset page per statement made PostgreSQL plan and join the whole set again per page.
    result = session.execute(query.order_by(col(Finding.id)).execution_options(yield_per=_PAGE))
    yield from result.partitions()


def _taken(session: Session, finding_ids: Sequence[int]) -> set[str]:
    return set(
        session.execute(
            select(col(Alert.key)).where(col(Alert.finding_id).in_(list(finding_ids)))
        ).scalars()
    )


def _key(finding: Finding, step: int) -> str:
    return f"finding:{finding.id}:{int(finding.opened_at.timestamp())}:{step}"


def _transfer_item(row: Any, *, now: dt.datetime, policy: Policy, worded: bool) -> Item:
    finding, transfer = row
    step, age = 0, (now - transfer.created_at).total_seconds()
    if finding.kind == FindingKind.STALE_PENDING:
        step = max(1, _stale_step(age, policy.stale_after))
    title, body = _UNWORDED
    if worded:
        title, body = finding_alert(
            finding.kind, finding.detail, _facts(transfer), step=step, age_seconds=age
        )
    return _item(_key(finding, step), finding, step, title, body, transfer, "transfer")


def _collection_item(row: Any, *, now: dt.datetime, policy: Policy, worded: bool) -> Item:
    finding, collection = row
    # A collection's stale_pending is about its expiry, not its age: one step only.
    step = 1 if finding.kind == FindingKind.STALE_PENDING else 0
    title, body = _UNWORDED
    if worded:
        title, body = collection_alert(finding.kind, finding.detail, collection)
    return _item(_key(finding, step), finding, step, title, body, collection, "collection")


def _line_item(row: Any, *, now: dt.datetime, policy: Policy, worded: bool) -> Item:
    finding, line, account = row
    title, body = _UNWORDED
    if worded:
        title, body = line_alert(finding.kind, finding.detail, account, line)
    return _item(_key(finding, 0), finding, 0, title, body, line, "statement line")


# An item not worded yet (`_candidates`): a title and body are written only for those sent on
# their own.
_UNWORDED = ("", "")


def _item(
    key: str,
    finding: Finding,
    step: int,
    title: str,
    body: str,
    subject: Transfer | Collection | StatementLine,
    noun: str,
) -> Item:
    if isinstance(subject, StatementLine):
        reference, at_stake = str(subject.id), subject.amount
    else:
        reference, at_stake = subject.reference, amount_at_stake(finding.kind, subject)
    return Item(
        key=key,
        kind=finding.kind,
        title=title,
        body=body,
        finding_id=finding.id,
        step=step,
        reference=reference,
        at_stake=at_stake,
        noun=noun,
    )


def _plain(item: Item) -> Item:
    # The wording of an item whose finding went away between the read and the claim.
    title = f"payrecon: {item.kind.replace('_', ' ')} ({item.noun} {item.reference})"
    return dataclasses.replace(item, title=title, body=title)


# word(session, items) -> the items with their title and body, by key (`_worded`).
Wording = Callable[[Session, Sequence[Item]], dict[str, Item]]


@dataclass
class _Outbox:
    """The messages a dispatch claimed: (row id, title, body, what it carries for the log)."""

    messages: list[tuple[int, str, str, dict[str, object]]] = field(default_factory=list)

    def add(self, alert_id: int, title: str, body: str, **log: object) -> None:
        self.messages.append((alert_id, title, body, log))


def _hour_start(now: dt.datetime) -> dt.datetime:
    return now.replace(minute=0, second=0, microsecond=0)


def _claim_and_plan(
    session: Session,
    items: Sequence[Item],
    rules: AlertRules,
    now: dt.datetime,
    *,
    findings: bool,
    word: Wording | None = None,
) -> _Outbox:
    # One transaction: claim every item's key, group what this process won, apply the storm
    # guard, and write down which row carries which finding (alert_book's module docstring).
    # Items not worded yet are worded by `word` when they go out on their own.
    outbox = _Outbox()
    book.take_turn(session=session)
    hour = _hour_start(now)
    # Counted before claiming: a claimed row is a message only once the plan says so.
    sent_this_hour = book.messages_since(hour, session=session)
    won = book.claim(items, session=session, now=now)
    mine = [item for item in items if item.key in won]
    if not mine:
        return outbox
    decided = plan(mine, rules, sent_this_hour=sent_this_hour)
    alone = [m.items[0] for m in decided.messages if not m.grouped and not m.items[0].title]
    worded = {} if word is None or not alone else word(session, alone)
    for message in decided.messages:
        if not message.grouped:
            item = message.items[0]
            alert_id = won[item.key]
            if not item.title:
                item = worded.get(item.key) or _plain(item)
                book.describe(alert_id, item.title, item.body, session=session)
            if item.finding_id is not None:
                book.supersede([item.finding_id], newer_than=alert_id, session=session)
            outbox.add(
                alert_id,
                item.title,
                item.body,
                key=item.key,
                kind=item.kind,
                reference=item.reference,
            )
            continue
        title, body = grouped_alert(
            message.kind,
            noun=message.items[0].noun,
            references=[item.reference for item in message.items],
            at_stake=sum(item.at_stake for item in message.items),
            console_url=rules.console_url,
            finding=findings,
        )
        group_key = f"{book.GROUP_PREFIX}{message.items[0].key}"
        group_id = book.new_message(group_key, title, body, session=session, now=now)
        assert group_id is not None  # its key embeds a key this process just won
        ids = [won[item.key] for item in message.items]
        book.carry(ids, book.GROUPED, group_id=group_id, title=title, session=session)
        outbox.add(group_id, title, body, key=group_key, kind=message.kind, count=len(ids))
    if decided.suppressed:
        held = [won[item.key] for item in decided.suppressed]
        title, body = suppressed_alert(
            len(held),
            hour_ends=hour + dt.timedelta(hours=1),
            cap=rules.max_per_hour,
            console_url=rules.console_url,
        )
        key = f"alerts-suppressed:{hour:%Y-%m-%dT%H}"
        notice_id = book.new_message(key, title, body, session=session, now=now)
        book.carry(held, book.SUPPRESSED, group_id=notice_id, title=title, session=session)
        if notice_id is not None:
            outbox.add(notice_id, title, body, key=key, count=len(held))
        logger.warning("alerts_suppressed", findings=len(held), cap=rules.max_per_hour)
    return outbox


def _send(
    engine: Engine, sink: AlertSink | None, outbox: _Outbox, now: dt.datetime
) -> tuple[int, int]:
    sent = failed = 0
    outcomes: dict[int, str | None] = {}
    for alert_id, title, body, log_fields in outbox.messages:
        error = None if sink is None else sink.send(title, body)
        outcomes[alert_id] = error
        log = logger.warning if error else logger.info
        log(
            "alert",
            **log_fields,
            title=title,
            delivered=sink is not None and error is None,
            error=error,
        )
        failed += error is not None
        sent += error is None
    if outcomes:
        delivered = "sent" if sink is not None else "logged"
        with write_session(engine) as session:
            book.record_outcomes(outcomes, delivered=delivered, session=session, now=now)
    return sent, failed


def dispatch(
    engine: Engine,
    sink: AlertSink | None,
    items: Sequence[Item],
    *,
    rules: AlertRules,
    now: dt.datetime,
    findings: bool = True,
    word: Wording | None = None,
) -> tuple[int, int]:
    """Claim, group (beyond `rules.group_after` of a kind), cap (the hour's storm guard) and
    send `items`; (messages sent, failed). Items whose key was ever claimed are skipped;
    items without a title are worded by `word` if they go out on their own."""
    if not items:
        return 0, 0
    with write_session(engine) as session:
        outbox = _claim_and_plan(session, items, rules, now, findings=findings, word=word)
    return _send(engine, sink, outbox, now)


def _resolved_notices(
    engine: Engine, sink: AlertSink | None, *, rules: AlertRules, now: dt.datetime
) -> tuple[int, int]:
    # A message whose findings all resolved gets one notice (claimed by a conditional
    # update, so once across processes); many at once go out as one message.
    outbox = _Outbox()
    with write_session(engine) as session:
        book.take_turn(session=session)
        candidates = book.resolved_messages(session=session)
        if not candidates:
            return 0, 0
        subjects = book.finding_subjects(
            sorted({fid for c in candidates for fid in c.finding_ids}), session=session
        )
        notices: list[tuple[int, str, str]] = []
        for candidate in candidates:
            if not book.mark_resolved(candidate.alert_id, session=session, now=now):
                continue
            named = [subjects[fid] for fid in candidate.finding_ids if fid in subjects]
            if not rules.resolved or not named:
                continue
            title, body = resolved_alert(
                named[0].kind,
                noun=named[0].noun,
                references=[s.reference for s in named],
                alerted_at=candidate.created_at,
                console_url=rules.console_url,
            )
            notices.append((candidate.alert_id, title, body))
        if not notices:
            return 0, 0
        budget = rules.max_per_hour - book.messages_since(_hour_start(now), session=session)
        if budget <= 0:
            logger.warning("resolved_notices_suppressed", notices=len(notices))
            return 0, 0
        if len(notices) > rules.group_after:
            title, body = resolved_many_alert(
                [title for _, title, _ in notices], console_url=rules.console_url
            )
            key = f"resolved:{notices[0][0]}:{len(notices)}"
        else:
            title, body = "", ""
        for alert_id, one_title, one_body in notices if not title else []:
            notice_id = book.new_message(
                f"resolved:{alert_id}", one_title, one_body, session=session, now=now
            )
            if notice_id is not None:
                outbox.add(notice_id, one_title, one_body, key=f"resolved:{alert_id}")
        if title:
            notice_id = book.new_message(key, title, body, session=session, now=now)
            if notice_id is not None:
                outbox.add(notice_id, title, body, key=key, count=len(notices))
    return _send(engine, sink, outbox, now)


def dispatch_alerts(
    engine: Engine, sink: AlertSink | None, *, now: dt.datetime, policy: Policy
) -> tuple[int, int]:
    """Alert every open, unacknowledged finding not yet alerted at its step, grouped by kind
    and capped per hour (README "Alerts"), then the resolved notices; (sent, failed).

    With no sink the alert is only logged (PAYRECON_ALERT_URLS unset: log only).
    """
    rules = policy.alerting
    resolved = _resolved_notices(engine, sink, rules=rules, now=now)
    raised = dispatch(
        engine,
        sink,
        _candidates(engine, now=now, policy=policy),
        rules=rules,
        now=now,
        word=functools.partial(_worded, now=now, policy=policy),
    )
    return raised[0] + resolved[0], raised[1] + resolved[1]


def send_keyed_alert(
    engine: Engine,
    sink: AlertSink | None,
    *,
    key: str,
    title: str,
    body: str,
    now: dt.datetime,
    rules: AlertRules | None = None,
) -> bool:
    """Claim `key` and send one alert not tied to a finding; False when already sent."""
    item = Item(key=key, kind=key.partition(":")[0], title=title, body=body)
    with write_session(engine) as session:
        outbox = _claim_and_plan(session, [item], rules or AlertRules(), now, findings=False)
    claimed = bool(outbox.messages) or _was_suppressed(engine, key)
    _send(engine, sink, outbox, now)
    return claimed


def _was_suppressed(engine: Engine, key: str) -> bool:
    with read_session(engine) as session:
        status = session.execute(select(col(Alert.status)).where(col(Alert.key) == key)).scalar()
    return status == book.SUPPRESSED


def alert_provider_key_refused(engine: Engine, sink: AlertSink | None, *, now: dt.datetime) -> bool:
    """One alert per hour while the provider keeps refusing the key."""
    title, body = key_refused_alert()
    key = f"provider-key-refused:{now.strftime('%Y-%m-%dT%H')}"
    return send_keyed_alert(engine, sink, key=key, title=title, body=body, now=now)
