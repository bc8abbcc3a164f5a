"""alerts group: a finding's alert may travel in a grouped message; resolved notices

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-06 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import ledger.types

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("alert") as batch:
        batch.add_column(sa.Column("group_id", _KEY, nullable=True))
        batch.add_column(
            sa.Column(
                "resolved_notice_at", ledger.types.UTCDateTime(timezone=True), nullable=True
            )
        )
    op.create_index("ix_alert_group_id", "alert", ["group_id"])
    op.create_index("ix_alert_created_at", "alert", ["created_at"])
    # Alerts sent before this revision never get a resolved notice: upgrading must not page
    # every channel about months of findings that resolved long ago.
    op.execute("UPDATE alert SET resolved_notice_at = created_at")


def downgrade() -> None:
    op.drop_index("ix_alert_created_at", table_name="alert")
    op.drop_index("ix_alert_group_id", table_name="alert")
    with op.batch_alter_table("alert") as batch:
        batch.drop_column("resolved_notice_at")
        batch.drop_column("group_id")
