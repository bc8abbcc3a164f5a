"""transfers gain re-verification and reversal columns (docs/rules.md: Reversals)

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
    # Plain ADD COLUMN, not a batch: on SQLite a batch rebuilds the table, which the virtual
    # reference-key columns of 0008 do not survive; adding nullable or defaulted columns needs
    # no rebuild on either database.
    op.add_column(
        "transfer", sa.Column("reverify_done", sa.Integer(), nullable=False, server_default="0")
    )
    op.add_column(
        "transfer",
        sa.Column("reversed_at", ledger.types.UTCDateTime(timezone=True), nullable=True),
    )
    op.add_column("transfer", sa.Column("reversal_reason", sa.Text(), nullable=True))
    op.add_column("transfer", sa.Column("reversal_source", sa.String(length=16), nullable=True))


def downgrade() -> None:
    # A reversed transfer goes back to the status the provider first confirmed: the three-status
    # schema has no other word for it.
    op.execute("UPDATE transfer SET status = 'successful' WHERE status = 'reversed'")
    for name in reversed(_NEW):
        # SQLite drops a plain column in place (3.35+); a batch would rebuild the table.
        op.execute(f"ALTER TABLE transfer DROP COLUMN {name}")
