"""provider checks kept; findings gain an assignee and notes

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 02:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import ledger.types

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _time(name: str, *, nullable: bool = True) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, ledger.types.UTCDateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    with op.batch_alter_table("finding") as batch:
        batch.add_column(sa.Column("assignee", sa.String(length=100), nullable=True))
    op.create_index("ix_finding_assignee", "finding", ["assignee"])
    op.create_table(
        "finding_note",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("finding_id", _KEY, nullable=False),
        sa.Column("author", sa.String(length=100), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        _time("created_at", nullable=False),
        sa.ForeignKeyConstraint(["finding_id"], ["finding.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_finding_note_finding", "finding_note", ["finding_id", "id"])
    op.create_table(
        "provider_check",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("transfer_id", _KEY, nullable=True),
        sa.Column("collection_id", _KEY, nullable=True),
        _time("checked_at", nullable=False),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("result", sa.String(length=16), nullable=False),
        sa.Column("provider_status", sa.String(length=16), nullable=True),
        sa.Column("amount", sa.BigInteger(), nullable=True),
        sa.Column("fee", sa.BigInteger(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["transfer_id"], ["transfer.id"]),
        sa.ForeignKeyConstraint(["collection_id"], ["collection.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_provider_check_transfer", "provider_check", ["transfer_id", "id"])
    op.create_index("ix_provider_check_collection", "provider_check", ["collection_id", "id"])
    op.create_index("ix_provider_check_checked_at", "provider_check", ["checked_at"])


def downgrade() -> None:
    op.drop_table("provider_check")
    op.drop_table("finding_note")
    op.drop_index("ix_finding_assignee", table_name="finding")
    with op.batch_alter_table("finding") as batch:
        batch.drop_column("assignee")
