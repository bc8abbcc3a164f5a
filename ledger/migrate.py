"""Apply the ledger's Alembic migrations (`payrecon db upgrade`) and check a ledger's revision."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.exc import DBAPIError, OperationalError

from ledger.db import create_db_engine, normalise_url
from ledger.errors import DatabaseUnavailableError, SchemaError

if TYPE_CHECKING:
    from sqlalchemy import Engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def alembic_config(url: str) -> Config:
    """An Alembic configuration pointing at the ledger's migrations and `url`."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    # ConfigParser interpolation would choke on % in passwords.
    rendered = normalise_url(url).render_as_string(hide_password=False).replace("%", "%%")
    config.set_main_option("sqlalchemy.url", rendered)
    return config


@functools.cache
def _scripts() -> ScriptDirectory:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return ScriptDirectory.from_config(config)


def head_revision() -> str:
    """The revision the code needs: the newest migration shipped with it."""
    head = _scripts().get_current_head()
    if head is None:  # pragma: no cover - the package always ships its migrations
        raise RuntimeError("no migrations found")
    return head


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the database at `url` up to `revision`."""
    try:
        command.upgrade(alembic_config(url), revision)
    except OperationalError as exc:
        raise DatabaseUnavailableError(str(exc.orig or exc)) from exc


def current(url: str) -> str | None:
    """The revision the database is at, or None when it was never migrated."""
    engine = create_db_engine(url)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def check_schema(engine: Engine) -> None:
    """Raise SchemaError unless the ledger is at the code's head revision (spec: Schema).

    DatabaseUnavailableError when the database does not answer.
    """
    try:
        with engine.connect() as connection:
            at = MigrationContext.configure(connection).get_current_revision()
    except (OperationalError, DBAPIError) as exc:
        raise DatabaseUnavailableError(str(exc.orig or exc)) from exc
    head = head_revision()
    if at != head:
        known = at is None or at in {script.revision for script in _scripts().walk_revisions()}
        raise SchemaError(at, head, known=known)
