"""Every table of the ledger, together (SQLModel on one metadata)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
    Date,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlmodel import Field, SQLModel

from ledger.types import BigIntKey, TransferStatus, UTCDateTime, utcnow


def _kobo(*, nullable: bool = True) -> int | None:
    return Field(default=None, sa_column=Column(BigInteger, nullable=nullable))  # type: ignore[no-any-return]


def _upper_key(column: str) -> str | None:
    # `statements.tokens.reference_key` upper-cases; the database computes and indexes the
    # same form of a reference, so a line's tokens are looked up through an index.
    computed = Computed(f"upper({column})", persisted=True)
    return Field(default=None, sa_column=Column(String(100), computed, index=True))  # type: ignore[no-any-return]


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
    # The references as the statement matcher looks them up (migration 0007).
    reference_key: str | None = _upper_key("reference")
    provider_reference_key: str | None = _upper_key("provider_reference")
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
    # Re-verification (docs/rules.md: Reversals): how many ages of PAYRECON_REVERIFY_AFTER have
    # been looked at; the next one is `next_check_at`, so the due query stays index-only.
    reverify_done: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )
    reversed_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    reversal_reason: str | None = Field(default=None, sa_column=Column(Text))
    reversal_source: str | None = Field(default=None, sa_column=Column(String(16)))
    lease_owner: str | None = Field(default=None, sa_column=Column(String(64)))
    lease_until: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    # The `sequence` of the transfer's last relay event (docs/rules.md: Relay); raised under the
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
    """One collection of the merchant: an account a customer pays into (docs/rules.md:
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
    # The references as the statement matcher looks them up (migration 0007).
    reference_key: str | None = _upper_key("reference")
    provider_reference_key: str | None = _upper_key("provider_reference")
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
    """A discrepancy on one subject (a transfer, a collection or a statement line:
    `ledger.subjects`); one row per (subject, kind), reopened if it recurs."""

    __tablename__ = "finding"
    __table_args__ = (
        # One finding per subject and kind; also the index of a subject's findings.
        UniqueConstraint("subject", "subject_id", "kind", name="uq_finding_subject_kind"),
        # The queue's summary (unresolved findings per kind and state) from the index alone.
        Index("ix_finding_unresolved_kind", "resolved_at", "kind", "acknowledged_at"),
        # The same summary for one assignee (the "Mine" link), from the index alone (0015).
        Index(
            "ix_finding_assignee_unresolved", "assignee", "resolved_at", "kind", "acknowledged_at"
        ),
    )

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    subject: str = Field(sa_column=Column(String(16), nullable=False))  # transfer | collection
    subject_id: int = Field(sa_column=Column(BigInteger, nullable=False))
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
    # The operator working it (docs/rules.md: Console); None while nobody is.
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
    """One lookup the reconciler made at the provider and what came back (append-only),
    about one subject (`ledger.subjects`)."""

    __tablename__ = "provider_check"
    __table_args__ = (
        # A subject's checks page by id, and the retention prune scans by time.
        Index("ix_provider_check_subject", "subject", "subject_id", "id"),
        Index("ix_provider_check_checked_at", "checked_at"),
    )

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    subject: str = Field(sa_column=Column(String(16), nullable=False))  # transfer | collection
    subject_id: int = Field(sa_column=Column(BigInteger, nullable=False))
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
    # `grouped` / `suppressed` rows are findings' claims carried by another row's message
    # (`group_id`, the id of that row); every other status is a message of its own.
    status: str = Field(default="pending", sa_column=Column(String(16), nullable=False))
    error: str | None = Field(default=None, sa_column=Column(Text))
    created_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False, index=True)
    )
    sent_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    group_id: int | None = Field(default=None, sa_column=Column(BigIntKey, index=True))
    # When this message's resolved notice was claimed (sent, or skipped when notices are off).
    resolved_notice_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))


class Lease(SQLModel, table=True):
    """A named lease (the single SQLite reconciler runner holds one)."""

    __tablename__ = "lease"

    name: str = Field(sa_column=Column(String(64), primary_key=True))
    owner: str = Field(sa_column=Column(String(64), nullable=False))
    expires_at: dt.datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))


class RelayEndpoint(SQLModel, table=True):
    """One of the merchant's systems that receives payrecon's events (docs/rules.md: Relay)."""

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
    # A broker URL's `user:password`, sealed like the secret; `url` is stored without it
    # (relay.destinations), so no list, log or audit row can show it.
    credentials_sealed: str | None = Field(default=None, sa_column=Column(Text))
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
    # The W3C traceparent of the span the event was written in (tracing on only): each attempt
    # to deliver it continues that trace (docs/rules.md: Observability).
    traceparent: str | None = Field(default=None, sa_column=Column(String(64), nullable=True))


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
    # The subject's key (`transfer:REF`, ledger.subjects.subject_key) and the event's
    # sequence, copied for the order rule.
    subject_key: str = Field(sa_column=Column(String(120), nullable=False))
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
    as its SHA-256 (docs/rules.md: Console, operators and audit)."""

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


class StatementAccount(SQLModel, table=True):
    """An account statements are imported for: the provider wallet or the merchant's bank
    account (docs/rules.md "Statements and period tie-out")."""

    __tablename__ = "statement_account"

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    name: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    kind: str = Field(sa_column=Column(String(8), nullable=False))  # wallet | bank
    created_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class StatementImport(SQLModel, table=True):
    """One statement file imported (append-only): what it held, what became of its lines,
    the dates it covers (for `missing_from_statement`) and the breaks of its balance chain."""

    __tablename__ = "statement_import"
    __table_args__ = (Index("ix_statement_import_account", "account_id", "id"),)

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    account_id: int = Field(
        sa_column=Column(BigIntKey, ForeignKey("statement_account.id"), nullable=False)
    )
    file_name: str = Field(sa_column=Column(Text, nullable=False))
    format: str = Field(sa_column=Column(String(16), nullable=False))
    mapping: str | None = Field(default=None, sa_column=Column(Text))
    sha256: str = Field(sa_column=Column(String(64), nullable=False))
    size: int = Field(sa_column=Column(BigInteger, nullable=False))
    read: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    new: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    already_known: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    invalid: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    matched: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    suggested: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    unmatched: int = Field(default=0, sa_column=Column(BigInteger, nullable=False))
    # The first and last dates of the file's lines: the span the statement covers.
    first_date: dt.date | None = Field(default=None, sa_column=Column(Date))
    last_date: dt.date | None = Field(default=None, sa_column=Column(Date))
    opening_balance: int | None = _kobo()
    closing_balance: int | None = _kobo()
    # JSON: the balance chain's breaks [{after_line, before_line, expected, stated}] (file
    # line numbers), the reversals the matcher saw, the locked periods the file touched.
    balance_breaks: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    reversals: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    locked_periods: str = Field(default="[]", sa_column=Column(Text, nullable=False))
    imported_by: str = Field(sa_column=Column(String(64), nullable=False))
    imported_at: dt.datetime = Field(
        default_factory=utcnow, sa_column=Column(UTCDateTime(), nullable=False)
    )


class StatementLine(SQLModel, table=True):
    """One movement of a statement, stored once per account whatever the number of
    overlapping exports (`identity`, statements.identity), and what it is matched to."""

    __tablename__ = "statement_line"
    __table_args__ = (
        UniqueConstraint("account_id", "identity", name="uq_statement_line_identity"),
        # Lines by state (the console's queues), by date in statement order (tie-out), the
        # open ones every reconcile pass looks at again, and a subject's lines.
        Index("ix_statement_line_account_state_date", "account_id", "state", "date"),
        # The tie-out reads these two alone (migration 0016): the balance chain in statement
        # order, and each transfer's matched lines.
        Index(
            "ix_statement_line_account_date",
            *("account_id", "date", "import_id", "position", "balance", "direction", "amount"),
        ),
        Index("ix_statement_line_state", "state", "id"),
        Index(
            "ix_statement_line_transfer",
            *("transfer_id", "account_id", "state", "date", "role", "direction", "amount"),
        ),
        Index("ix_statement_line_collection", "collection_id"),
        Index("ix_statement_line_other", "other_line_id"),
        Index("ix_statement_line_amount_date", "amount", "date"),
        # The reversal credits still waiting for their transfer's confirmed success: every
        # reconcile pass looks at them again (migration 0017; a handful of rows at most).
        Index(
            "ix_statement_line_reversal_pending",
            "transfer_id",
            sqlite_where=text("reversal_pending"),
            postgresql_where=text("reversal_pending"),
        ),
        CheckConstraint("amount > 0", name="ck_statement_line_amount"),
    )

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    account_id: int = Field(
        sa_column=Column(BigIntKey, ForeignKey("statement_account.id"), nullable=False)
    )
    identity: str = Field(sa_column=Column(String(64), nullable=False))
    date: dt.date = Field(sa_column=Column(Date, nullable=False))
    value_date: dt.date | None = Field(default=None, sa_column=Column(Date))
    amount: int = Field(sa_column=Column(BigInteger, nullable=False))
    direction: str = Field(sa_column=Column(String(8), nullable=False))  # debit | credit
    balance: int | None = _kobo()
    reference: str = Field(default="", sa_column=Column(Text, nullable=False))
    narration: str = Field(default="", sa_column=Column(Text, nullable=False))
    import_id: int = Field(
        sa_column=Column(BigIntKey, ForeignKey("statement_import.id"), nullable=False)
    )
    file_line: int = Field(sa_column=Column(BigInteger, nullable=False))
    # Statement order inside its import: the file line, negated for a newest-first file.
    position: int = Field(sa_column=Column(BigInteger, nullable=False))
    state: str = Field(default="unmatched", sa_column=Column(String(16), nullable=False))
    transfer_id: int | None = Field(
        default=None, sa_column=Column(BigIntKey, ForeignKey("transfer.id"))
    )
    collection_id: int | None = Field(
        default=None, sa_column=Column(BigIntKey, ForeignKey("collection.id"))
    )
    other_line_id: int | None = Field(
        default=None, sa_column=Column(BigIntKey, ForeignKey("statement_line.id"))
    )
    role: str | None = Field(default=None, sa_column=Column(String(24)))
    ignored_as: str | None = Field(default=None, sa_column=Column(String(16)))
    note: str | None = Field(default=None, sa_column=Column(Text))
    # Who matched or ignored it (an operator, `cli:…`, or `payrecon` for the matcher).
    matched_by: str | None = Field(default=None, sa_column=Column(String(64)))
    matched_at: dt.datetime | None = Field(default=None, sa_column=Column(UTCDateTime()))
    # A credit the matcher read as a reversal of a transfer the ledger holds successful, not
    # yet applied to the transfer (docs/rules.md "Reversals", source `statement`).
    reversal_pending: bool = Field(
        default=False, sa_column=Column(Boolean, nullable=False, server_default="0")
    )
    event_sequence: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )


class PeriodLock(SQLModel, table=True):
    """A period of one account closed with `period close --lock`, with its tie-out as it
    stood then (JSON, `TieOut.to_json()`)."""

    __tablename__ = "period_lock"
    __table_args__ = (Index("ix_period_lock_account", "account_id", "since", "until"),)

    id: int | None = Field(default=None, sa_column=Column(BigIntKey, primary_key=True))
    account_id: int = Field(
        sa_column=Column(BigIntKey, ForeignKey("statement_account.id"), nullable=False)
    )
    since: dt.date = Field(sa_column=Column(Date, nullable=False))
    until: dt.date = Field(sa_column=Column(Date, nullable=False))
    locked_by: str = Field(sa_column=Column(String(64), nullable=False))
    locked_at: dt.datetime = Field(sa_column=Column(UTCDateTime(), nullable=False))
    snapshot: str = Field(sa_column=Column(Text, nullable=False))
