"""A served app with operators of every role, a revoked one and an expired session."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import Engine, select

from ledger.db import read_session, write_session
from ledger.models import AuditEntry
from ledger.operators import add_operator, revoke_operator, secret_hash, start_session
from ledger.types import utcnow
from payrecon.app import create_app
from payrecon.settings import load_settings
from tests.support.apps import (  # noqa: F401 (fixtures of the admin API tests)
    ADMIN,
    RELAY_KEYS,
    bearer,
    receiver_url,
    stack,
    start_receiver,
)
from tests.support.servers import running_server


@dataclass(frozen=True)
class Cast:
    """The identities of one served app: tokens by role name, and cookies."""

    url: str
    tokens: dict[str, str]
    expired_session: str


def seed_operators(engine: Engine) -> tuple[dict[str, str], str]:
    """Operators viewer, finance, boss (admin) and gone (revoked), and an expired session."""
    tokens: dict[str, str] = {"admin": ADMIN}
    now = utcnow()
    with write_session(engine) as session:
        for name, role in (("vera", "viewer"), ("fiona", "finance"), ("boss", "admin")):
            _, tokens[role] = add_operator(session, name=name, role=role, now=now)
        _, tokens["revoked"] = add_operator(session, name="gone", role="admin", now=now)
        expired = start_session(
            session,
            operator="boss",
            role="admin",
            credential_hash=secret_hash(tokens["admin"]),
            now=now - dt.timedelta(hours=9),
            lifetime=dt.timedelta(hours=8),
        )
    with write_session(engine) as session:
        revoke_operator(session, name="gone", now=now)
    return tokens, expired.session_id


StartCast = Callable[..., contextlib.AbstractContextManager[Cast]]


@pytest.fixture
def start_cast(database_url: str, engine: Engine) -> StartCast:
    """Start an app (extra settings as keywords) over seeded operators; yields the Cast."""
    tokens, expired = seed_operators(engine)

    @contextlib.contextmanager
    def start(**overrides: Any) -> Iterator[Cast]:
        options: dict[str, Any] = {
            "admin_token": ADMIN,
            "relay_keys": RELAY_KEYS,
            "relay_allow_networks": "127.0.0.0/8",  # test consumers listen on loopback
            "insecure_cookies": True,
            **overrides,
        }
        settings = load_settings(database_url=database_url, **options)
        with running_server(create_app(settings, engine=engine)) as url:
            yield Cast(url, tokens, expired)

    return start


@pytest.fixture
def cast(start_cast: StartCast) -> Iterator[Cast]:
    """An app over seeded operators, plain-http cookies allowed."""
    with start_cast() as served:
        yield served


def audit_rows(engine: Engine, action: str | None = None) -> list[AuditEntry]:
    """The audit log, oldest first (only `action` when given)."""
    statement = select(AuditEntry).order_by(AuditEntry.id)  # type: ignore[arg-type]
    if action is not None:
        statement = statement.where(AuditEntry.action == action)  # type: ignore[arg-type]
    with read_session(engine) as session:
        return list(session.execute(statement).scalars())
