"""findings gain a covering index for the queue's summary (issue 25: the queue at scale)

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26 14:30:00
"""

from __future__ import annotations

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The findings queue counts unresolved findings per kind and state on every page
    # (ledger.finding_queue.queue_counts): with (resolved_at, kind, acknowledged_at) both
    # databases answer it from the index alone, reading only the unresolved entries. An index
    # only: no table is rebuilt.
    op.create_index(
        "ix_finding_unresolved_kind", "finding", ["resolved_at", "kind", "acknowledged_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_finding_unresolved_kind", table_name="finding")
