"""index webhook events by provider reference

The receiver looks up every event a batch's references already have, whatever the event type;
the (event, reference) unique index cannot serve a lookup by reference alone.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 09:30:00
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_webhook_event_reference", "webhook_event", ["reference"])


def downgrade() -> None:
    op.drop_index("ix_webhook_event_reference", table_name="webhook_event")
