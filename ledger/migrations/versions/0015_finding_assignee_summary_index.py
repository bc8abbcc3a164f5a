"""findings gain a covering index for the queue's summary filtered by assignee (issue 25)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26 14:45:00
"""

from __future__ import annotations

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The queue's summary for one assignee (`assignee=ada`, the "Mine" link) counts that
    # operator's unresolved findings per kind and state (ledger.finding_queue.queue_counts).
    # Without this index SQLite read every unresolved finding through ix_finding_unresolved_kind
    # and looked each one's assignee up in the table (~50 ms at 50,000 findings); with it both
    # databases answer from the index alone, reading only that assignee's unresolved entries.
    # ix_finding_assignee stays: it keeps a list of one assignee's findings in id order. An
    # index only: no table is rebuilt.
    op.create_index(
        "ix_finding_assignee_unresolved",
        "finding",
        ["assignee", "resolved_at", "kind", "acknowledged_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_finding_assignee_unresolved", table_name="finding")
