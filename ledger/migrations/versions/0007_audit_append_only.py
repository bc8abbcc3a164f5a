"""the audit log refuses INSERT OR REPLACE (SQLite) and TRUNCATE (PostgreSQL) too

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 10:00:00
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

# Migration 0005's triggers refuse UPDATE and DELETE, but two statements rewrite the log
# without firing them (docs/rules.md: Robustness rules, "append-only against any statement"):
# SQLite's INSERT OR REPLACE (and REPLACE INTO) deletes the row it collides with without
# firing DELETE triggers unless recursive_triggers is on, so an insert naming an existing id
# is refused before it happens; PostgreSQL's TRUNCATE fires no row trigger, only a statement one.
_SQLITE_TRIGGER = (
    "CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log "
    "WHEN EXISTS (SELECT 1 FROM audit_log WHERE id = NEW.id) "
    "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
)
_POSTGRES_TRIGGER = (
    "CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log "
    "FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()"
)


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_POSTGRES_TRIGGER)
    else:
        op.execute(_SQLITE_TRIGGER)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_log_no_truncate ON audit_log")
    else:
        op.execute("DROP TRIGGER IF EXISTS audit_log_no_replace")
