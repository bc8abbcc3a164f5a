"""Fixtures shared by every test: databases on SQLite and PostgreSQL, and settings."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from ledger.db import create_db_engine
from tests.support.databases import PostgresFactory, SqliteFactory, postgres_available

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="session")
def sqlite_factory(tmp_path_factory: pytest.TempPathFactory) -> SqliteFactory:
    """One migrated SQLite template for the session."""
    return SqliteFactory(tmp_path_factory.mktemp("sqlite"))


@pytest.fixture(scope="session")
def postgres_factory() -> Iterator[PostgresFactory]:
    """One migrated PostgreSQL template for the session; skipped or failed when absent."""
    if not postgres_available():
        if os.environ.get("PAYRECON_REQUIRE_POSTGRES") == "1":
            pytest.fail("PAYRECON_REQUIRE_POSTGRES=1 but no PostgreSQL server answers")
        pytest.skip("no PostgreSQL server (set PAYRECON_TEST_POSTGRES_URL)")
    factory = PostgresFactory()
    yield factory
    factory.drop_all()


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh, migrated, empty ledger database: once on SQLite, once on PostgreSQL (dropped
    when the test ends)."""
    if request.param == "sqlite":
        factory: SqliteFactory = request.getfixturevalue("sqlite_factory")
        yield factory.new()
        return
    postgres: PostgresFactory = request.getfixturevalue("postgres_factory")
    url = postgres.new()
    yield url
    postgres.drop(url)


@pytest.fixture
def postgres_url(postgres_factory: PostgresFactory) -> Iterator[str]:
    """A fresh, migrated PostgreSQL database (for tests that need several processes), dropped
    when the test ends."""
    url = postgres_factory.new()
    yield url
    postgres_factory.drop(url)


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """An engine on the fresh database, disposed after the test."""
    built = create_db_engine(database_url)
    yield built
    built.dispose()


@pytest.fixture(autouse=True)
def _clean_payrecon_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never read the developer's PAYRECON_* variables or .env file."""
    for name in list(os.environ):
        if name.startswith("PAYRECON_") and name not in {
            "PAYRECON_TEST_POSTGRES_URL",
            "PAYRECON_REQUIRE_POSTGRES",
        }:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
