"""operators, their console sessions and the append-only audit log

Revision ID: 0005
Revises: 0003
Create Date: 2026-11-24 02:45:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import ledger.types

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

# The audit log is append-only (docs/rules.md: Console, operators and audit): nothing in the code
# updates or deletes it, and these triggers make the database refuse it too, so a stray
# statement or a hand-typed fix cannot rewrite who did what. A table owner can still drop the
# triggers; that is a deliberate act, not an accident.
_SQLITE_TRIGGERS = [
    f"CREATE TRIGGER audit_log_no_{verb.lower()} BEFORE {verb} ON audit_log "
    "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
    for verb in ("UPDATE", "DELETE")
]
_POSTGRES_FUNCTION = """
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END
$$
"""
_POSTGRES_TRIGGER = (
    "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log "
    "FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()"
)


def _time(name: str, *, nullable: bool = True) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, ledger.types.UTCDateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "operator",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        _time("created_at", nullable=False),
        _time("revoked_at"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_table(
        "operator_session",
        sa.Column("id", _KEY, nullable=False),
        sa.Column("id_hash", sa.String(length=64), nullable=False),
        sa.Column("operator", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        _time("created_at", nullable=False),
        _time("expires_at", nullable=False),
        _time("ended_at"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("id_hash"),
    )
    op.create_index(
        "ix_operator_session_operator", "operator_session", ["operator", "ended_at"]
    )
    op.create_table(
        "audit_log",
        sa.Column("id", _KEY, nullable=False),
        _time("at", nullable=False),
        sa.Column("operator", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("action", sa.String(length=40), nullable=False),
        sa.Column("subject", sa.Text(), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("remote_addr", sa.String(length=64), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_audit_log_operator", "audit_log", ["operator", "id"])
    op.create_index("ix_audit_log_action", "audit_log", ["action", "id"])
    op.create_index("ix_audit_log_at", "audit_log", ["at"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_POSTGRES_FUNCTION)
        op.execute(_POSTGRES_TRIGGER)
    else:
        for statement in _SQLITE_TRIGGERS:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_log_append_only ON audit_log")
        op.execute("DROP FUNCTION IF EXISTS audit_log_append_only()")
    op.drop_table("audit_log")
    op.drop_table("operator_session")
    op.drop_table("operator")
