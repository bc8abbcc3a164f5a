"""What every command needs, built lazily once per process: settings, engine, logging.

Nothing heavy is imported at module level: `payrecon --help` and `--version` import this
module, and must not pay for SQLAlchemy, Alembic or pydantic (spec: start-up time).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from payrecon.logconfig import Redactor
    from payrecon.settings import Settings

EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_FINDINGS = 3


def fail(message: str, code: int = EXIT_RUNTIME) -> NoReturn:
    """Print one clear line to stderr (secrets hidden) and exit with `code`."""
    # Driver messages span lines (psycopg adds a hint on its own line): one line, always.
    message = " ".join(line.strip() for line in message.splitlines() if line.strip())
    context = click.get_current_context(silent=True)
    app = context.find_object(AppContext) if context is not None else None
    if app is not None:
        message = app.redact(message)
    click.echo(f"payrecon: {message}", err=True)
    sys.exit(code)


@dataclass
class AppContext:
    """The click context object; nothing is built until a command asks for it."""

    _settings: Settings | None = None
    _engine: Engine | None = None
    _redactor: Redactor | None = None

    def settings(self) -> Settings:
        """Settings from the environment; exit 2 naming the variable when one is wrong.

        A `PAYRECON_*` name payrecon does not read gets one warning line (spec: Settings).
        """
        if self._settings is None:
            import structlog

            from payrecon.errors import ConfigError
            from payrecon.logconfig import Redactor, configure_logging
            from payrecon.settings import (
                load_settings,
                secret_tokens,
                secret_values,
                unknown_names,
            )

            try:
                settings = load_settings()
            except ConfigError as exc:
                fail(str(exc), EXIT_USAGE)
            self._settings = settings
            self._redactor = Redactor(secret_values(settings), secret_tokens(settings))
            configure_logging(secrets=self._redactor.secrets, tokens=self._redactor.tokens)
            logger = structlog.get_logger(__name__)
            for name, closest in unknown_names():
                hint = f" (did you mean {closest}?)" if closest else ""
                logger.warning(f"{name} is not a payrecon setting and is ignored{hint}")
        return self._settings

    def redact(self, text: str) -> str:
        """`text` with every configured secret replaced (once settings are loaded)."""
        return text if self._redactor is None else self._redactor.scrub(text)

    def engine(
        self, *, migrate: bool = True, read_only: bool = False, durable: bool = True
    ) -> Engine:
        """The ledger engine, at the code's migration revision or the command exits 2.

        SQLite databases are migrated on first use; PostgreSQL ones must be migrated with
        `payrecon db upgrade`. A `read_only` command never creates a SQLite file; a command
        whose writes may all be done again skips the fsync of each commit (`durable=False`,
        ledger.db.create_db_engine).
        """
        if self._engine is None:
            from ledger.db import create_db_engine
            from ledger.errors import DatabaseUnavailableError, SchemaError
            from ledger.migrate import check_schema, upgrade

            settings = self.settings()
            if read_only:
                self._refuse_missing_sqlite(settings)
            engine = create_db_engine(settings.database_url, durable=durable)
            try:
                try:
                    check_schema(engine)
                except SchemaError as exc:
                    if not (migrate and settings.is_sqlite and exc.behind):
                        raise
                    upgrade(settings.database_url)  # SQLite is migrated on start
                    check_schema(engine)
            except SchemaError as exc:
                engine.dispose()
                fail(str(exc), EXIT_USAGE)
            except DatabaseUnavailableError as exc:
                engine.dispose()
                fail(f"database unavailable: {exc}")
            self._engine = engine
        return self._engine

    @staticmethod
    def _refuse_missing_sqlite(settings: Settings) -> None:
        from ledger.db import sqlite_path

        path = sqlite_path(settings.database_url)
        if path is not None and not Path(path).exists():
            fail(
                f"no ledger at {path} (PAYRECON_DATABASE_URL): the file does not exist, and "
                "this command only reads",
                EXIT_USAGE,
            )

    def close(self) -> None:
        """Dispose of what was built."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


def app_context(ctx: click.Context) -> AppContext:
    """The AppContext of the running command."""
    obj = ctx.find_object(AppContext)
    if obj is None:  # pragma: no cover - main() always installs one
        obj = ctx.ensure_object(AppContext)
    return obj
