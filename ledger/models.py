"""Every table of the ledger, together (SQLModel on one metadata)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlmodel import Field, SQLModel

from ledger.types import BigIntKey, TransferStatus, UTCDateTime, utcnow


def _kobo(*, nullable: bool = True) -> int | None:
    return Field(default=None, sa_column=Column(BigInteger, nullable=nullable))  # type: ignore[no-any-return]


class Transfer(SQLModel, table=True):
    """One payout of the merchant, keyed by the merchant's reference."""

    __tablename__ = "transfer"
    __table_args__ = (
        # The reconciler's due query reads only this index: a pass is O(due), not O(ledger).
        Index("ix_transfer_due", "next_check_at"),
        Index("ix_transfer_status_created", "status", "created_at"),
    )

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    reference: str = Field(sa_column=Column(String(100), nullable=False, unique=True))
    provider_reference: str | None = Field(
        default=None, sa_column=Column(String(100), nullable=True, unique=True)
    )
    origin: str = Field(sa_column=Column(String(16), nullable=False))
    status: str = Field(
        default=TransferStatus.PENDING.value, sa_column=Column(String(16), nullable=False)
    )
    confirmed: bool = Field(default=False, nullable=False)
    amount: int | None = _kobo()
    fee: int | None = _kobo()
    provider_amount: int | None = _kobo()
    provider_fee: int | None = _kobo()
    provider_status: str | None = Field(default=None, sa_column=Column(String(16)))
    webhook_amount: int | None = _kobo()
    webhook_fee: int | None = _kobo()
    webhook_status: str | None = Field(default=None, sa_column=Column(String(16)))
    failure_reason: str | None = Field(default=None, sa_column=Column(Text))
    bank_code: str | None = Field(default=None, sa_column=Column(String(16)))
    account_number: str | None = Field(default=None, sa_column=Column(String(16)))
    account_name: str | None = Field(default=None, sa_column=Column(String(200)))
    initiation: str | None = Field(default=None, sa_column=Column(String(16)))
    initiation_error: str | None = Field(default=None, sa_column=Column(Text))
    next_check_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    check_attempts: int = Field(default=0, nullable=False)
    not_found_count: int = Field(default=0, nullable=False)
    last_checked_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    confirmed_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    # Re-verification (PRODUCT.md: Reversals): how many ages of PAYRECON_REVERIFY_AFTER have
    # been looked at; the next one is `next_check_at`, so the due query stays index-only.
    reverify_done: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    reversed_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    reversal_reason: str | None = Field(default=None, sa_column=Column(Text))
    reversal_source: str | None = Field(default=None, sa_column=Column(String(16)))
    lease_owner: str | None = Field(default=None, sa_column=Column(String(64)))
    lease_until: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    # The `sequence` of the transfer's last relay event (PRODUCT.md: Relay); raised under the
    # row's lock by whoever writes an event, so two processes never hand out the same number.
    event_sequence: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    created_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False, index=True)
    )
    updated_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class Collection(SQLModel, table=True):
    """One collection of the merchant: an account a customer pays into (PRODUCT.md:
    Collections), keyed by the merchant's reference and checked like a transfer."""

    __tablename__ = "collection"
    __table_args__ = (
        # The reconciler's due query reads only this index, as for transfers.
        Index("ix_collection_due", "next_check_at"),
        Index("ix_collection_status_created", "status", "created_at"),
    )

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    reference: str = Field(sa_column=Column(String(100), nullable=False, unique=True))
    provider_reference: str | None = Field(
        default=None, sa_column=Column(String(100), nullable=True, unique=True)
    )
    origin: str = Field(sa_column=Column(String(16), nullable=False))
    status: str = Field(
        default=TransferStatus.PENDING.value, sa_column=Column(String(16), nullable=False)
    )
    confirmed: bool = Field(default=False, nullable=False)
    amount: int = Field(sa_column=Column(BigInteger, nullable=False))  # expected
    amount_paid: int | None = _kobo()
    fee: int | None = _kobo()  # quoted at creation
    provider_fee: int | None = _kobo()
    provider_status: str | None = Field(default=None, sa_column=Column(String(16)))
    account_number: str | None = Field(default=None, sa_column=Column(String(32)))
    account_name: str | None = Field(default=None, sa_column=Column(String(200)))
    bank_name: str | None = Field(default=None, sa_column=Column(String(200)))
    customer_name: str | None = Field(default=None, sa_column=Column(String(200)))
    customer_email: str | None = Field(default=None, sa_column=Column(String(254)))
    customer_phone: str | None = Field(default=None, sa_column=Column(String(32)))
    expires_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    paid_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    failure_reason: str | None = Field(default=None, sa_column=Column(Text))
    initiation: str | None = Field(default=None, sa_column=Column(String(16)))
    initiation_error: str | None = Field(default=None, sa_column=Column(Text))
    next_check_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    # The one look after expires_at + PAYRECON_COLLECTION_GRACE has been made.
    final_check_done: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default="0")
    )
    check_attempts: int = Field(default=0, nullable=False)
    not_found_count: int = Field(default=0, nullable=False)
    last_checked_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    confirmed_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    lease_owner: str | None = Field(default=None, sa_column=Column(String(64)))
    lease_until: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    event_sequence: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    created_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False, index=True)
    )
    updated_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class Delivery(SQLModel, table=True):
    """One authenticated webhook delivery, archived raw and never changed (append-only)."""

    __tablename__ = "delivery"

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    received_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False, index=True)
    )
    remote_addr: str | None = Field(default=None, sa_column=Column(String(64)))
    headers: str = Field(sa_column=Column(Text, nullable=False))
    body: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    body_sha256: str = Field(sa_column=Column(String(64), nullable=False))
    size: int = Field(nullable=False)
    outcome: str = Field(sa_column=Column(String(16), nullable=False))
    error: str | None = Field(default=None, sa_column=Column(Text))
    event_type: str | None = Field(default=None, sa_column=Column(String(64)))
    reference: str | None = Field(default=None, sa_column=Column(String(100)))
    webhook_id: str | None = Field(default=None, sa_column=Column(String(200)))
    event_id: int | None = Field(
        default=None, sa_column=Column(BigIntKey, ForeignKey("webhook_event.id"))
    )
    transfer_id: int | None = Field(
        default=None, sa_column=Column(BigIntKey, ForeignKey("transfer.id"), index=True)
    )


class WebhookEvent(SQLModel, table=True):
    """A logical event: (`event`, provider reference) once, whatever the number of copies."""

    __tablename__ = "webhook_event"
    __table_args__ = (
        UniqueConstraint("event", "reference", name="uq_event_reference"),
        # Lookups by provider reference whatever the event type (migration 0002).
        Index("ix_webhook_event_reference", "reference"),
    )

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    event: str = Field(sa_column=Column(String(64), nullable=False))
    reference: str = Field(sa_column=Column(String(100), nullable=False))
    webhook_id: str | None = Field(
        default=None, sa_column=Column(String(200), nullable=True, unique=True)
    )
    content_hash: str = Field(sa_column=Column(String(64), nullable=False))
    payload: str = Field(sa_column=Column(Text, nullable=False))
    transfer_id: int = Field(
        sa_column=Column(BigIntKey, ForeignKey("transfer.id"), nullable=False, index=True)
    )
    received_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class Finding(SQLModel, table=True):
    """A discrepancy on one transfer or one collection (exactly one of the two); one row per
    (subject, kind), reopened if it recurs."""

    __tablename__ = "finding"
    __table_args__ = (
        UniqueConstraint("transfer_id", "kind", name="uq_finding_transfer_kind"),
        UniqueConstraint("collection_id", "kind", name="uq_finding_collection_kind"),
        CheckConstraint(
            "(transfer_id IS NULL) <> (collection_id IS NULL)", name="ck_finding_one_subject"
        ),
    )

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    transfer_id: int | None = Field(
        default=None, sa_column=Column(BigIntKey, ForeignKey("transfer.id"), nullable=True)
    )
    collection_id: int | None = Field(
        default=None, sa_column=Column(BigIntKey, ForeignKey("collection.id"), nullable=True)
    )
    kind: str = Field(sa_column=Column(String(32), nullable=False, index=True))
    detail: str = Field(sa_column=Column(Text, nullable=False))
    opened_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    resolved_at: dt.datetime | None = Field(
        default=None, sa_column=Column(UTCDateTime(), index=True)
    )
    acknowledged_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    ack_note: str | None = Field(default=None, sa_column=Column(Text))
    # The operator working it (PRODUCT.md: Console); None while nobody is.
    assignee: str | None = Field(default=None, sa_column=Column(String(100), index=True))
    updated_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class FindingNote(SQLModel, table=True):
    """One operator's note on a finding (an acknowledgement's note is one too); append-only."""

    __tablename__ = "finding_note"
    __table_args__ = (Index("ix_finding_note_finding", "finding_id", "id"),)

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    finding_id: int = Field(sa_column=Column(BigIntKey, ForeignKey("finding.id"), nullable=False))
    author: str = Field(sa_column=Column(String(100), nullable=False))
    body: str = Field(sa_column=Column(Text, nullable=False))
    created_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class ProviderCheck(SQLModel, table=True):
    """One lookup the reconciler made at the provider and what came back (append-only);
    about a transfer or a collection (one of the two ids is set)."""

    __tablename__ = "provider_check"
    __table_args__ = (
        # A transfer's checks page by id, and the retention prune scans by time.
        Index("ix_provider_check_transfer", "transfer_id", "id"),
        Index("ix_provider_check_collection", "collection_id", "id"),
        Index("ix_provider_check_checked_at", "checked_at"),
    )

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    transfer_id: int | None = Field(
        default=None, sa_column=Column(BigIntKey, ForeignKey("transfer.id"), nullable=True)
    )
    collection_id: int | None = Field(
        default=None, sa_column=Column(BigIntKey, ForeignKey("collection.id"), nullable=True)
    )
    checked_at: dt.datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))
    # The provider's HTTP status; None when no answer came (timeout, connection refused).
    http_status: int | None = Field(default=None, sa_column=Column(Integer))
    # found | not_found | transient | uninterpretable
    result: str = Field(sa_column=Column(String(16), nullable=False))
    provider_status: str | None = Field(default=None, sa_column=Column(String(16)))
    amount: int | None = _kobo()
    fee: int | None = _kobo()
    error: str | None = Field(default=None, sa_column=Column(Text))


class Alert(SQLModel, table=True):
    """An alert, claimed by a unique key before it is sent so it goes out once."""

    __tablename__ = "alert"

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    key: str = Field(sa_column=Column(String(200), nullable=False, unique=True))
    finding_id: int | None = Field(
        default=None, sa_column=Column(BigIntKey, ForeignKey("finding.id"), index=True)
    )
    step: int = Field(default=0, nullable=False)
    title: str = Field(sa_column=Column(Text, nullable=False))
    body: str = Field(sa_column=Column(Text, nullable=False))
    status: str = Field(default="pending", sa_column=Column(String(16), nullable=False))
    error: str | None = Field(default=None, sa_column=Column(Text))
    created_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    sent_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))


class Lease(SQLModel, table=True):
    """A named lease (the single SQLite reconciler runner holds one)."""

    __tablename__ = "lease"

    name: str = Field(sa_column=Column(String(64), primary_key=True))
    owner: str = Field(sa_column=Column(String(64), nullable=False))
    expires_at: dt.datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))


class RelayEndpoint(SQLModel, table=True):
    """One of the merchant's systems that receives payrecon's events (PRODUCT.md: Relay)."""

    __tablename__ = "relay_endpoint"

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    url: str = Field(sa_column=Column(Text, nullable=False))
    description: str | None = Field(default=None, sa_column=Column(Text))
    # Comma-separated event types; None means the default set (every type but
    # transfer.reported).
    event_types: str | None = Field(default=None, sa_column=Column(Text))
    enabled: bool = Field(default=True, sa_column=Column(Boolean, nullable=False))
    disabled_reason: str | None = Field(default=None, sa_column=Column(Text))
    # The whsec_ secret sealed with PAYRECON_RELAY_KEYS (relay.keys): a dump alone cannot sign.
    secret_sealed: str = Field(sa_column=Column(Text, nullable=False))
    # The secret before the last rotation, still sent beside the new one until
    # previous_secret_until.
    previous_secret_sealed: str | None = Field(default=None, sa_column=Column(Text))
    previous_secret_until: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    # Since when every attempt has failed (None after a success): drives the auto-disable.
    failing_since: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    last_success_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    removed_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    created_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    updated_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class RelayEvent(SQLModel, table=True):
    """One event of payrecon's own (the outbox), written in the transaction of its change."""

    __tablename__ = "relay_event"
    __table_args__ = (
        UniqueConstraint("subject", "subject_id", "sequence", name="uq_relay_event_sequence"),
        Index("ix_relay_event_type_created", "type", "created_at"),
    )

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    event_id: str = Field(sa_column=Column(String(40), nullable=False, unique=True))
    type: str = Field(sa_column=Column(String(40), nullable=False))
    subject: str = Field(sa_column=Column(String(16), nullable=False))  # transfer | collection
    subject_id: int = Field(sa_column=Column(BigInteger, nullable=False))
    reference: str | None = Field(default=None, sa_column=Column(String(100), index=True))
    sequence: int = Field(sa_column=Column(Integer, nullable=False))
    # The exact body every attempt sends (its timestamp is the event's, fixed at creation).
    body: str = Field(sa_column=Column(Text, nullable=False))
    created_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class RelayDelivery(SQLModel, table=True):
    """One event on its way to one endpoint: pending until delivered or failed for good."""

    __tablename__ = "relay_delivery"
    __table_args__ = (
        # The worker's due query, and the order rule's "an earlier one of this subject is
        # still pending" probe.
        Index("ix_relay_delivery_due", "status", "next_attempt_at"),
        Index("ix_relay_delivery_order", "endpoint_id", "subject_key", "sequence"),
    )

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    event_id: int = Field(
        sa_column=Column(BigIntKey, ForeignKey("relay_event.id"), nullable=False, index=True)
    )
    endpoint_id: int = Field(
        sa_column=Column(BigIntKey, ForeignKey("relay_endpoint.id"), nullable=False)
    )
    # "transfer:ID" or "collection:ID" and the event's sequence, copied for the order rule.
    subject_key: str = Field(sa_column=Column(String(40), nullable=False))
    sequence: int = Field(sa_column=Column(Integer, nullable=False))
    status: str = Field(default="pending", sa_column=Column(String(16), nullable=False))
    attempts: int = Field(default=0, sa_column=Column(Integer, nullable=False))
    next_attempt_at: dt.datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))
    claimed_by: str | None = Field(default=None, sa_column=Column(String(64)))
    claimed_until: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    last_status_code: int | None = Field(default=None, sa_column=Column(Integer))
    last_error: str | None = Field(default=None, sa_column=Column(Text))
    delivered_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    created_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    updated_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class RelayAttempt(SQLModel, table=True):
    """One try at sending a delivery, whatever came of it (append-only)."""

    __tablename__ = "relay_attempt"

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    delivery_id: int = Field(
        sa_column=Column(BigIntKey, ForeignKey("relay_delivery.id"), nullable=False, index=True)
    )
    attempted_at: dt.datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))
    duration_ms: int = Field(sa_column=Column(Integer, nullable=False))
    status_code: int | None = Field(default=None, sa_column=Column(Integer))
    error: str | None = Field(default=None, sa_column=Column(Text))
    # The first KiB of the answer's body, decoded leniently: enough to see what went wrong.
    response_head: str | None = Field(default=None, sa_column=Column(Text))
    outcome: str = Field(sa_column=Column(String(16), nullable=False))  # delivered|retry|failed


class OperatorAccount(SQLModel, table=True):
    """A person (or system) allowed into the admin API and console; the token is kept only
    as its SHA-256 (PRODUCT.md: Console, operators and audit)."""

    __tablename__ = "operator"

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    name: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    role: str = Field(sa_column=Column(String(16), nullable=False))
    token_hash: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    created_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )
    revoked_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))


class OperatorSession(SQLModel, table=True):
    """A console session: the cookie's id is kept only as its SHA-256; `ended_at` set by
    logout or by revoking the operator ends it at once."""

    __tablename__ = "operator_session"
    __table_args__ = (Index("ix_operator_session_operator", "operator", "ended_at"),)

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    id_hash: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    # The name, not a key: the bootstrap `admin` (PAYRECON_ADMIN_TOKEN) has no operator row.
    operator: str = Field(sa_column=Column(String(64), nullable=False))
    role: str = Field(sa_column=Column(String(16), nullable=False))
    created_at: dt.datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))
    expires_at: dt.datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))
    ended_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))


class AuditEntry(SQLModel, table=True):
    """One operator action, append-only: written in the transaction of the action, never
    updated or deleted (triggers refuse both on SQLite and PostgreSQL)."""

    __tablename__ = "audit_log"
    __table_args__ = (
        Index("ix_audit_log_operator", "operator", "id"),
        Index("ix_audit_log_action", "action", "id"),
        Index("ix_audit_log_at", "at"),
    )

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    at: dt.datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))
    operator: str = Field(sa_column=Column(String(64), nullable=False))
    role: str = Field(sa_column=Column(String(16), nullable=False))
    action: str = Field(sa_column=Column(String(40), nullable=False))
    subject: str | None = Field(default=None, sa_column=Column(Text))
    detail: str | None = Field(default=None, sa_column=Column(Text))
    remote_addr: str | None = Field(default=None, sa_column=Column(String(64)))
