"""collections: the collection table; a finding belongs to a transfer or a collection

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 02:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import ledger.types

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _time(name: str, *, nullable: bool = True) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, ledger.types.UTCDateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "collection",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("reference", sa.String(length=100), nullable=False),
        sa.Column("provider_reference", sa.String(length=100), nullable=True),
        sa.Column("origin", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("confirmed", sa.Boolean(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("amount_paid", sa.BigInteger(), nullable=True),
        sa.Column("fee", sa.BigInteger(), nullable=True),
        sa.Column("provider_fee", sa.BigInteger(), nullable=True),
        sa.Column("provider_status", sa.String(length=16), nullable=True),
        sa.Column("account_number", sa.String(length=32), nullable=True),
        sa.Column("account_name", sa.String(length=200), nullable=True),
        sa.Column("bank_name", sa.String(length=200), nullable=True),
        sa.Column("customer_name", sa.String(length=200), nullable=True),
        sa.Column("customer_email", sa.String(length=254), nullable=True),
        sa.Column("customer_phone", sa.String(length=32), nullable=True),
        _time("expires_at"),
        _time("paid_at"),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        sa.Column("initiation", sa.String(length=16), nullable=True),
        sa.Column("initiation_error", sa.Text(), nullable=True),
        _time("next_check_at"),
        sa.Column("final_check_done", sa.Boolean(), nullable=False, server_default="0"),
        sa.Column("check_attempts", sa.Integer(), nullable=False),
        sa.Column("not_found_count", sa.Integer(), nullable=False),
        _time("last_checked_at"),
        _time("confirmed_at"),
        sa.Column("lease_owner", sa.String(length=64), nullable=True),
        _time("lease_until"),
        sa.Column("event_sequence", sa.Integer(), nullable=False, server_default="0"),
        _time("created_at", nullable=False),
        _time("updated_at", nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("reference"),
        sa.UniqueConstraint("provider_reference"),
    )
    op.create_index("ix_collection_due", "collection", ["next_check_at"])
    op.create_index("ix_collection_status_created", "collection", ["status", "created_at"])
    op.create_index("ix_collection_created_at", "collection", ["created_at"])
    # Additive on `finding`: existing rows keep their transfer_id and satisfy the check.
    # (SQLite rebuilds the table in batch mode, copying every row.)
    with op.batch_alter_table("finding") as batch:
        batch.add_column(sa.Column("collection_id", _KEY, nullable=True))
        batch.alter_column("transfer_id", existing_type=_KEY, nullable=True)
        batch.create_foreign_key(
            "fk_finding_collection_id", "collection", ["collection_id"], ["id"]
        )
        batch.create_unique_constraint("uq_finding_collection_kind", ["collection_id", "kind"])
        batch.create_check_constraint(
            "ck_finding_one_subject", "(transfer_id IS NULL) <> (collection_id IS NULL)"
        )


def downgrade() -> None:
    # Collection findings have no transfer to belong to: they go with their table.
    op.execute("DELETE FROM alert WHERE finding_id IN "
               "(SELECT id FROM finding WHERE collection_id IS NOT NULL)")
    op.execute("DELETE FROM finding WHERE collection_id IS NOT NULL")
    with op.batch_alter_table("finding") as batch:
        batch.drop_constraint("ck_finding_one_subject", type_="check")
        batch.drop_constraint("uq_finding_collection_kind", type_="unique")
        batch.drop_constraint("fk_finding_collection_id", type_="foreignkey")
        batch.drop_column("collection_id")
        batch.alter_column("transfer_id", existing_type=_KEY, nullable=False)
    op.drop_table("collection")
