"""Apply the ledger's Alembic migrations (`payrecon db upgrade`)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.exc import OperationalError

from ledger.db import normalise_url
from ledger.errors import DatabaseUnavailableError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def alembic_config(url: str) -> Config:
    """An Alembic configuration pointing at the ledger's migrations and `url`."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    # ConfigParser interpolation would choke on % in passwords.
    rendered = normalise_url(url).render_as_string(hide_password=False).replace("%", "%%")
    config.set_main_option("sqlalchemy.url", rendered)
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the database at `url` up to `revision`."""
    try:
        command.upgrade(alembic_config(url), revision)
    except OperationalError as exc:
        raise DatabaseUnavailableError(str(exc.orig or exc)) from exc


def current(url: str) -> str | None:
    """The revision the database is at, or None when it was never migrated."""
    from alembic.runtime.migration import MigrationContext

    from ledger.db import create_db_engine

    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()
