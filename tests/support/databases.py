"""Fresh, migrated ledger databases for tests, on SQLite and on PostgreSQL."""

from __future__ import annotations

import itertools
import os
import shutil
import time
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from ledger.migrate import upgrade

DEFAULT_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
_counter = itertools.count()


def postgres_admin_url() -> str:
    """The URL of a PostgreSQL database we may connect to in order to create others."""
    return os.environ.get("PAYRECON_TEST_POSTGRES_URL", DEFAULT_ADMIN_URL)


def postgres_available() -> bool:
    """True when the test PostgreSQL server answers."""
    try:
        with psycopg.connect(_libpq(postgres_admin_url()), connect_timeout=3):
            return True
    except psycopg.Error:
        return False


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _admin_execute(sql: str) -> None:
    with psycopg.connect(_libpq(postgres_admin_url()), autocommit=True) as conn:
        conn.execute(sql)  # type: ignore[arg-type]


def _drop(name: str) -> None:
    """Drop one test database, ending whatever connections a test left open to it."""
    _admin_execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_abandoned(budget: float = 30.0) -> list[str]:
    """Drop the databases of earlier test runs whose process is gone (killed, timed out).

    Names are `payrecon_t{pid}_…`: a run still alive keeps its own. At most `budget` seconds
    are spent (it runs inside the first test's time limit); the next session goes on.
    """
    deadline = time.monotonic() + budget
    with psycopg.connect(_libpq(postgres_admin_url()), autocommit=True) as conn:
        names = [
            row[0]
            for row in conn.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE 'payrecon\\_t%'"
            )
        ]
    abandoned = []
    for name in names:
        pid = name[len("payrecon_t") :].split("_", 1)[0]
        if time.monotonic() > deadline:
            break
        if pid.isdigit() and not _alive(int(pid)):
            _drop(name)
            abandoned.append(name)
    return abandoned


class PostgresFactory:
    """Creates databases from one migrated template (CREATE DATABASE … TEMPLATE is fast).

    Each test's database is dropped when the test ends (`drop`), so the end of a session has
    only the template and a few others left: dropping a whole session's databases at the end
    took longer than a test may (300 s) on a loaded machine.
    """

    def __init__(self) -> None:
        sweep_abandoned()
        self.prefix = f"payrecon_t{os.getpid()}"
        self.template = f"{self.prefix}_template"
        self.created: list[str] = []
        _admin_execute(f"DROP DATABASE IF EXISTS {self.template}")
        _admin_execute(f"CREATE DATABASE {self.template}")
        self.created.append(self.template)
        upgrade(self.url_of(self.template))

    def url_of(self, name: str) -> str:
        """The SQLAlchemy URL of database `name` on the test server."""
        return (
            make_url(postgres_admin_url()).set(database=name).render_as_string(hide_password=False)
        )

    def new(self) -> str:
        """A fresh migrated database; its URL."""
        name = f"{self.prefix}_{next(_counter)}"
        _admin_execute(f"DROP DATABASE IF EXISTS {name}")
        _admin_execute(f"CREATE DATABASE {name} TEMPLATE {self.template}")
        self.created.append(name)
        return self.url_of(name)

    def empty(self) -> str:
        """A fresh database that was never migrated (no tables at all); its URL."""
        name = f"{self.prefix}_{next(_counter)}"
        _admin_execute(f"DROP DATABASE IF EXISTS {name}")
        _admin_execute(f"CREATE DATABASE {name}")
        self.created.append(name)
        return self.url_of(name)

    def drop(self, url: str) -> None:
        """Drop the database at `url` (one this factory made) and forget it."""
        name = make_url(url).database
        if name in self.created and name != self.template:
            _drop(name)
            self.created.remove(name)

    def drop_all(self) -> None:
        """Drop every database this factory made that is still there (closing connections)."""
        for name in reversed(self.created):
            _drop(name)
        self.created.clear()


class SqliteFactory:
    """Copies one migrated SQLite file for each test."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.template = directory / "template.db"
        upgrade(f"sqlite:///{self.template}")

    def new(self) -> str:
        """A fresh migrated database file; its URL."""
        path = self.directory / f"ledger-{next(_counter)}.db"
        shutil.copyfile(self.template, path)
        return f"sqlite:///{path}"
