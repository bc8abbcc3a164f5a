"""relay events keep the W3C trace context they were written in (docs/rules.md: Observability)

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-17 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Nullable, no index: written only while tracing is on, read only with the event's body.
    # A plain ADD COLUMN needs no table rebuild on either database.
    op.add_column("relay_event", sa.Column("traceparent", sa.String(length=64), nullable=True))


def downgrade() -> None:
    # SQLite drops a plain column in place (3.35+); a batch would rebuild the table.
    op.execute("ALTER TABLE relay_event DROP COLUMN traceparent")
