"""relay endpoints gain sealed broker credentials (docs/rules.md: Relay destinations: message brokers)

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-12 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A broker URL's `user:password` lives here sealed with PAYRECON_RELAY_KEYS, and the `url`
    # column keeps the URL without it, so nothing that shows a URL can show a password. Every
    # endpoint before this revision is HTTP, whose URLs never held credentials: nothing to move.
    # Plain ADD COLUMN (no batch rebuild on SQLite).
    op.add_column("relay_endpoint", sa.Column("credentials_sealed", sa.Text(), nullable=True))


def downgrade() -> None:
    # The schema before 0012 knows no broker endpoint: they are removed (their history stays)
    # rather than left with a URL that lost its credentials.
    op.execute(
        "UPDATE relay_endpoint SET enabled = false, removed_at = COALESCE(removed_at, updated_at),"
        " disabled_reason = 'removed: broker endpoints need revision 0012'"
        " WHERE url NOT LIKE 'http://%' AND url NOT LIKE 'https://%'"
    )
    # SQLite drops a plain column in place (3.35+); a batch would rebuild the table.
    op.execute("ALTER TABLE relay_endpoint DROP COLUMN credentials_sealed")
