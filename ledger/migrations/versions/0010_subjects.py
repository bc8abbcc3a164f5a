"""findings and provider checks on (subject, subject_id); relay order keys `kind:REFERENCE`

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 09:00:00
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

# The subject of a row that had exactly one of transfer_id / collection_id (0004's check).
_SUBJECT = "CASE WHEN collection_id IS NOT NULL THEN 'collection' ELSE 'transfer' END"
_SUBJECT_ID = "COALESCE(collection_id, transfer_id)"
# The order key the relay's deliveries carry: `kind:REFERENCE` (ledger/subjects.py), read
# from the delivery's event, which has always stored its subject's reference.
_KEY_BY_REFERENCE = (
    "UPDATE relay_delivery SET subject_key = (SELECT e.subject || ':' || "
    "COALESCE(e.reference, CAST(e.subject_id AS VARCHAR(20))) FROM relay_event e "
    "WHERE e.id = relay_delivery.event_id)"
)
_KEY_BY_ID = (
    "UPDATE relay_delivery SET subject_key = (SELECT e.subject || ':' || "
    "CAST(e.subject_id AS VARCHAR(20)) FROM relay_event e WHERE e.id = relay_delivery.event_id)"
)


@contextlib.contextmanager
def _rebuilding(*children: tuple[str, str]) -> Iterator[None]:
    """Keep the rows of `children` ((table, foreign key column)) aside while SQLite rebuilds
    the table they point at, and put them back, ids and all, once it stands again.

    SQLite alters such a table by copying it and dropping the old one (batch mode), and the
    drop is refused while rows point at it; foreign keys cannot be switched off inside the
    migration's transaction. PostgreSQL alters in place: nothing to do.
    """
    if op.get_bind().dialect.name != "sqlite":
        yield
        return
    for child, column in children:
        op.execute(f"CREATE TEMP TABLE kept_{child} AS SELECT * FROM {child} WHERE {column} IS NOT NULL")  # noqa: S608
        op.execute(f"DELETE FROM {child} WHERE {column} IS NOT NULL")  # noqa: S608
    yield
    for child, _ in reversed(children):
        op.execute(f"INSERT INTO {child} SELECT * FROM kept_{child}")  # noqa: S608
        op.execute(f"DROP TABLE kept_{child}")


_ON_FINDING = (("alert", "finding_id"), ("finding_note", "finding_id"))
_ON_DELIVERY = (("relay_attempt", "delivery_id"),)


def _add_subject(table: str) -> None:
    with op.batch_alter_table(table) as batch:
        batch.add_column(sa.Column("subject", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("subject_id", sa.BigInteger(), nullable=True))
    op.execute(f"UPDATE {table} SET subject = {_SUBJECT}, subject_id = {_SUBJECT_ID}")  # noqa: S608


def upgrade() -> None:
    with _rebuilding(*_ON_FINDING):
        _upgrade_findings()
    _upgrade_checks()
    with _rebuilding(*_ON_DELIVERY):
        with op.batch_alter_table("relay_delivery") as batch:
            batch.alter_column(
                "subject_key",
                existing_type=sa.String(length=40),
                type_=sa.String(length=120),
                existing_nullable=False,
            )
    op.execute(_KEY_BY_REFERENCE)


def _upgrade_findings() -> None:
    _add_subject("finding")
    with op.batch_alter_table("finding") as batch:
        batch.drop_constraint("ck_finding_one_subject", type_="check")
        batch.drop_constraint("uq_finding_transfer_kind", type_="unique")
        batch.drop_constraint("uq_finding_collection_kind", type_="unique")
        batch.drop_column("transfer_id")  # its foreign key goes with it
        batch.drop_column("collection_id")
        batch.alter_column("subject", existing_type=sa.String(length=16), nullable=False)
        batch.alter_column("subject_id", existing_type=sa.BigInteger(), nullable=False)
        batch.create_unique_constraint(
            "uq_finding_subject_kind", ["subject", "subject_id", "kind"]
        )


def _upgrade_checks() -> None:
    _add_subject("provider_check")
    op.drop_index("ix_provider_check_transfer", table_name="provider_check")
    op.drop_index("ix_provider_check_collection", table_name="provider_check")
    with op.batch_alter_table("provider_check") as batch:
        batch.drop_column("transfer_id")
        batch.drop_column("collection_id")
        batch.alter_column("subject", existing_type=sa.String(length=16), nullable=False)
        batch.alter_column("subject_id", existing_type=sa.BigInteger(), nullable=False)
    op.create_index(
        "ix_provider_check_subject", "provider_check", ["subject", "subject_id", "id"]
    )


def _restore_ids(table: str) -> None:
    # Rows about any other subject have no column to go back to: they go.
    if table == "finding":
        op.execute(
            "DELETE FROM alert WHERE finding_id IN (SELECT id FROM finding "
            "WHERE subject NOT IN ('transfer', 'collection'))"
        )
        op.execute(
            "DELETE FROM finding_note WHERE finding_id IN (SELECT id FROM finding "
            "WHERE subject NOT IN ('transfer', 'collection'))"
        )
    op.execute(f"DELETE FROM {table} WHERE subject NOT IN ('transfer', 'collection')")  # noqa: S608
    with op.batch_alter_table(table) as batch:
        batch.add_column(sa.Column("transfer_id", _KEY, nullable=True))
        batch.add_column(sa.Column("collection_id", _KEY, nullable=True))
    op.execute(
        f"UPDATE {table} SET "  # noqa: S608
        "transfer_id = CASE WHEN subject = 'transfer' THEN subject_id END, "
        "collection_id = CASE WHEN subject = 'collection' THEN subject_id END"
    )


def downgrade() -> None:
    op.execute(_KEY_BY_ID)
    with _rebuilding(*_ON_DELIVERY), op.batch_alter_table("relay_delivery") as batch:
        batch.alter_column(
            "subject_key",
            existing_type=sa.String(length=120),
            type_=sa.String(length=40),
            existing_nullable=False,
        )
    op.drop_index("ix_provider_check_subject", table_name="provider_check")
    _restore_ids("provider_check")
    with op.batch_alter_table("provider_check") as batch:
        batch.drop_column("subject")
        batch.drop_column("subject_id")
        batch.create_foreign_key(
            "fk_provider_check_transfer_id", "transfer", ["transfer_id"], ["id"]
        )
        batch.create_foreign_key(
            "fk_provider_check_collection_id", "collection", ["collection_id"], ["id"]
        )
    op.create_index("ix_provider_check_transfer", "provider_check", ["transfer_id", "id"])
    op.create_index("ix_provider_check_collection", "provider_check", ["collection_id", "id"])
    _restore_ids("finding")
    with _rebuilding(*_ON_FINDING):
        _downgrade_findings()


def _downgrade_findings() -> None:
    with op.batch_alter_table("finding") as batch:
        batch.drop_constraint("uq_finding_subject_kind", type_="unique")
        batch.drop_column("subject")
        batch.drop_column("subject_id")
        batch.create_foreign_key("fk_finding_transfer_id", "transfer", ["transfer_id"], ["id"])
        batch.create_foreign_key(
            "fk_finding_collection_id", "collection", ["collection_id"], ["id"]
        )
        batch.create_unique_constraint("uq_finding_transfer_kind", ["transfer_id", "kind"])
        batch.create_unique_constraint("uq_finding_collection_kind", ["collection_id", "kind"])
        batch.create_check_constraint(
            "ck_finding_one_subject", "(transfer_id IS NULL) <> (collection_id IS NULL)"
        )
