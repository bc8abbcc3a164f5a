"""statements: accounts, imports, lines and locked periods; reference keys for matching

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import ledger.types

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _time(name: str, *, nullable: bool = True) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, ledger.types.UTCDateTime(timezone=True), nullable=nullable)


def _count(name: str) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, sa.BigInteger(), nullable=False)


def _stored() -> bool:
    # PostgreSQL only has stored generated columns; SQLite can add only a virtual one to an
    # existing table (a stored one would mean copying the table, which its foreign keys
    # forbid inside the migration's transaction). Both can be indexed.
    return op.get_bind().dialect.name != "sqlite"


def upgrade() -> None:
    op.create_table(
        "statement_account",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        _time("created_at", nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "statement_import",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("account_id", _KEY, nullable=False),
        sa.Column("file_name", sa.Text(), nullable=False),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("mapping", sa.Text(), nullable=True),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        _count("size"),
        _count("read"),
        _count("new"),
        _count("already_known"),
        _count("invalid"),
        _count("matched"),
        _count("suggested"),
        _count("unmatched"),
        sa.Column("first_date", sa.Date(), nullable=True),
        sa.Column("last_date", sa.Date(), nullable=True),
        sa.Column("opening_balance", sa.BigInteger(), nullable=True),
        sa.Column("closing_balance", sa.BigInteger(), nullable=True),
        sa.Column("balance_breaks", sa.Text(), nullable=False),
        sa.Column("reversals", sa.Text(), nullable=False),
        sa.Column("locked_periods", sa.Text(), nullable=False),
        sa.Column("imported_by", sa.String(length=64), nullable=False),
        _time("imported_at", nullable=False),
        sa.ForeignKeyConstraint(["account_id"], ["statement_account.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_statement_import_account", "statement_import", ["account_id", "id"])
    op.create_table(
        "statement_line",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("account_id", _KEY, nullable=False),
        sa.Column("identity", sa.String(length=64), nullable=False),
        sa.Column("date", sa.Date(), nullable=False),
        sa.Column("value_date", sa.Date(), nullable=True),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("direction", sa.String(length=8), nullable=False),
        sa.Column("balance", sa.BigInteger(), nullable=True),
        sa.Column("reference", sa.Text(), nullable=False),
        sa.Column("narration", sa.Text(), nullable=False),
        sa.Column("import_id", _KEY, nullable=False),
        sa.Column("file_line", sa.BigInteger(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("transfer_id", _KEY, nullable=True),
        sa.Column("collection_id", _KEY, nullable=True),
        sa.Column("other_line_id", _KEY, nullable=True),
        sa.Column("role", sa.String(length=24), nullable=True),
        sa.Column("ignored_as", sa.String(length=16), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("matched_by", sa.String(length=64), nullable=True),
        _time("matched_at"),
        sa.Column("reversal_pending", sa.Boolean(), server_default="0", nullable=False),
        sa.Column("event_sequence", sa.Integer(), server_default="0", nullable=False),
        sa.CheckConstraint("amount > 0", name="ck_statement_line_amount"),
        sa.ForeignKeyConstraint(["account_id"], ["statement_account.id"]),
        sa.ForeignKeyConstraint(["import_id"], ["statement_import.id"]),
        sa.ForeignKeyConstraint(["transfer_id"], ["transfer.id"]),
        sa.ForeignKeyConstraint(["collection_id"], ["collection.id"]),
        sa.ForeignKeyConstraint(["other_line_id"], ["statement_line.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("account_id", "identity", name="uq_statement_line_identity"),
    )
    for name, columns in (
        ("ix_statement_line_account_state_date", ["account_id", "state", "date"]),
        ("ix_statement_line_account_date", ["account_id", "date", "import_id", "position"]),
        ("ix_statement_line_state", ["state", "id"]),
        ("ix_statement_line_transfer", ["transfer_id"]),
        ("ix_statement_line_collection", ["collection_id"]),
        ("ix_statement_line_other", ["other_line_id"]),
        ("ix_statement_line_amount_date", ["amount", "date"]),
    ):
        op.create_index(name, "statement_line", columns)
    op.create_table(
        "period_lock",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("account_id", _KEY, nullable=False),
        sa.Column("since", sa.Date(), nullable=False),
        sa.Column("until", sa.Date(), nullable=False),
        sa.Column("locked_by", sa.String(length=64), nullable=False),
        _time("locked_at", nullable=False),
        sa.Column("snapshot", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["account_id"], ["statement_account.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_period_lock_account", "period_lock", ["account_id", "since", "until"])
    # The matcher's reference lookup (statements.tokens.reference_key is upper-cased).
    for table in ("transfer", "collection"):
        for column in ("reference", "provider_reference"):
            computed = sa.Computed(f"upper({column})", persisted=_stored())
            op.add_column(table, sa.Column(f"{column}_key", sa.String(length=100), computed))
            op.create_index(f"ix_{table}_{column}_key", table, [f"{column}_key"])

def downgrade() -> None:
    for table in ("transfer", "collection"):
        for column in ("reference", "provider_reference"):
            op.drop_index(f"ix_{table}_{column}_key", table_name=table)
            op.drop_column(table, f"{column}_key")
    op.drop_table("period_lock")
    op.drop_table("statement_line")
    op.drop_table("statement_import")
    op.drop_table("statement_account")
