"""statement lines gain a partial index of the reversal credits still pending (issue 26)

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 15:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A statement credit read as the reversal of a transfer not yet confirmed successful keeps
    # `reversal_pending`; every reconcile pass looks at those lines again
    # (reconcile.statements.passes) through this index, which holds only them. An index only:
    # no table is rebuilt.
    op.create_index(
        "ix_statement_line_reversal_pending",
        "statement_line",
        ["transfer_id"],
        sqlite_where=sa.text("reversal_pending"),
        postgresql_where=sa.text("reversal_pending"),
    )


def downgrade() -> None:
    op.drop_index("ix_statement_line_reversal_pending", table_name="statement_line")
