"""What every command needs, built lazily once per process: settings, engine, logging."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import NoReturn

import click
from sqlalchemy import Engine

from ledger.db import create_db_engine
from ledger.errors import DatabaseUnavailableError
from ledger.migrate import upgrade
from payrecon.errors import ConfigError
from payrecon.logconfig import configure_logging
from payrecon.settings import Settings, load_settings

EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_FINDINGS = 3


def fail(message: str, code: int = EXIT_RUNTIME) -> NoReturn:
    """Print one clear line to stderr and exit with `code`."""
    click.echo(f"payrecon: {message}", err=True)
    sys.exit(code)


def secrets_of(settings: Settings) -> list[str]:
    """Every secret value a log line must never show."""
    values = [
        settings.provider_secret_key,
        settings.webhook_secret,
        settings.webhook_token,
        settings.webhook_hmac_secret,
        settings.webhook_standard_secret,
        settings.admin_token,
    ]
    return [v.get_secret_value() for v in values if v is not None]


@dataclass
class AppContext:
    """The click context object; nothing is built until a command asks for it."""

    _settings: Settings | None = None
    _engine: Engine | None = None
    migrated: bool = field(default=False)

    def settings(self) -> Settings:
        """Settings from the environment; exit 2 naming the variable when one is wrong."""
        if self._settings is None:
            try:
                self._settings = load_settings()
            except ConfigError as exc:
                fail(str(exc), EXIT_USAGE)
            configure_logging(secrets=secrets_of(self._settings))
        return self._settings

    def engine(self, *, migrate: bool = True) -> Engine:
        """The ledger engine; SQLite databases are migrated on first use."""
        if self._engine is None:
            settings = self.settings()
            if migrate and settings.is_sqlite:
                try:
                    upgrade(settings.database_url)
                except DatabaseUnavailableError as exc:
                    fail(f"database unavailable: {exc}")
            self._engine = create_db_engine(settings.database_url)
        return self._engine

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
