"""statement lines get covering indexes for the period tie-out (docs/statements.md "Closing a
period"; bench/RESULTS.md §16)

The tie-out reads a month of lines twice in ways an index can answer alone: the balance
chain in statement order (date, import, position → balance and the signed amount) and each
transfer's matched lines (transfer → account, state, date, role, direction, amount). Each
index keeps its name and its leading columns, so every query that used it still does; the
extra columns spare a table row read per line.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-11 10:00:00
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

_WIDER = {
    "ix_statement_line_account_date": (
        ["account_id", "date", "import_id", "position"],
        ["balance", "direction", "amount"],
    ),
    "ix_statement_line_transfer": (
        ["transfer_id"],
        ["account_id", "state", "date", "role", "direction", "amount"],
    ),
}


def upgrade() -> None:
    for name, (columns, extra) in _WIDER.items():
        op.drop_index(name, table_name="statement_line")
        op.create_index(name, "statement_line", [*columns, *extra])


def downgrade() -> None:
    for name, (columns, _) in _WIDER.items():
        op.drop_index(name, table_name="statement_line")
        op.create_index(name, "statement_line", columns)
