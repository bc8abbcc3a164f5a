"""relay outbox: endpoints, events, deliveries, attempts; a transfer's event sequence

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 23:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import ledger.types

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _time(name: str, *, nullable: bool = True) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, ledger.types.UTCDateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.add_column(
        "transfer",
        sa.Column("event_sequence", sa.Integer(), nullable=False, server_default="0"),
    )
    op.create_table(
        "relay_endpoint",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("event_types", sa.Text(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        sa.Column("secret_sealed", sa.Text(), nullable=False),
        sa.Column("previous_secret_sealed", sa.Text(), nullable=True),
        _time("previous_secret_until"),
        _time("failing_since"),
        _time("last_success_at"),
        _time("removed_at"),
        _time("created_at", nullable=False),
        _time("updated_at", nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "relay_event",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("event_id", sa.String(length=40), nullable=False),
        sa.Column("type", sa.String(length=40), nullable=False),
        sa.Column("subject", sa.String(length=16), nullable=False),
        sa.Column("subject_id", sa.BigInteger(), nullable=False),
        sa.Column("reference", sa.String(length=100), nullable=True),
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        _time("created_at", nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("event_id"),
        sa.UniqueConstraint("subject", "subject_id", "sequence", name="uq_relay_event_sequence"),
    )
    op.create_index("ix_relay_event_type_created", "relay_event", ["type", "created_at"])
    op.create_index("ix_relay_event_reference", "relay_event", ["reference"])
    op.create_table(
        "relay_delivery",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("event_id", _KEY, nullable=False),
        sa.Column("endpoint_id", _KEY, nullable=False),
        sa.Column("subject_key", sa.String(length=40), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        _time("next_attempt_at", nullable=False),
        sa.Column("claimed_by", sa.String(length=64), nullable=True),
        _time("claimed_until"),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        _time("delivered_at"),
        _time("created_at", nullable=False),
        _time("updated_at", nullable=False),
        sa.ForeignKeyConstraint(["event_id"], ["relay_event.id"]),
        sa.ForeignKeyConstraint(["endpoint_id"], ["relay_endpoint.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_relay_delivery_due", "relay_delivery", ["status", "next_attempt_at"])
    op.create_index(
        "ix_relay_delivery_order", "relay_delivery", ["endpoint_id", "subject_key", "sequence"]
    )
    op.create_index("ix_relay_delivery_event_id", "relay_delivery", ["event_id"])
    op.create_table(
        "relay_attempt",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("delivery_id", _KEY, nullable=False),
        _time("attempted_at", nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("response_head", sa.Text(), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(["delivery_id"], ["relay_delivery.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_relay_attempt_delivery_id", "relay_attempt", ["delivery_id"])


def downgrade() -> None:
    op.drop_table("relay_attempt")
    op.drop_table("relay_delivery")
    op.drop_table("relay_event")
    op.drop_table("relay_endpoint")
    with op.batch_alter_table("transfer") as batch:
        batch.drop_column("event_sequence")
