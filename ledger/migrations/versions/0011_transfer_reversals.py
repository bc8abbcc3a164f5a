"""transfers gain re-verification and reversal columns (PRODUCT.md: Reversals)

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-10 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import ledger.types

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_NEW = ("reverify_done", "reversed_at", "reversal_reason", "reversal_source")


def upgrade() -> None:
    # Columns only, no index: re-verification reuses `next_check_at` (ix_transfer_due), so the
    # due query stays the one index range it was. Transfers settled before this revision keep
    # `next_check_at` empty: they are not re-verified (docs/operations.md, Reversals).
    with op.batch_alter_table("transfer") as batch:
        batch.add_column(
            sa.Column("reverify_done", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("reversed_at", ledger.types.UTCDateTime(timezone=True), nullable=True)
        )
        batch.add_column(sa.Column("reversal_reason", sa.Text(), nullable=True))
        batch.add_column(sa.Column("reversal_source", sa.String(length=16), nullable=True))


def downgrade() -> None:
    # A reversed transfer goes back to the status the provider first confirmed: the three-status
    # schema has no other word for it.
    op.execute("UPDATE transfer SET status = 'successful' WHERE status = 'reversed'")
    with op.batch_alter_table("transfer") as batch:
        for name in reversed(_NEW):
            batch.drop_column(name)
