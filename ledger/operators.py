"""Operators and their console sessions in the ledger: tokens and session ids kept as hashes."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import update
from sqlmodel import Session, col, select

from ledger.errors import OperatorExistsError, OperatorNameError, OperatorNotFoundError
from ledger.models import OperatorAccount, OperatorSession

MAX_NAME_CHARS = 64
# Letters, digits, dot, dash and underscore, starting with a letter or digit: a name shows in
# pages, logs, CSV and the audit log, so it carries no markup, spaces, control characters or
# look-alike letters from other scripts. `:` is left out so that "cli:root" (the CLI's own
# name in the audit log) can never be an operator's.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# `admin` is PAYRECON_ADMIN_TOKEN's operator; `cli` prefixes the command line's audit names.
RESERVED_NAMES = frozenset({"admin", "cli"})
TOKEN_BYTES = 32


def check_name(name: str) -> str:
    """`name` if an operator may have it; OperatorNameError saying why not."""
    if not name:
        raise OperatorNameError("an operator name cannot be empty")
    if len(name) > MAX_NAME_CHARS:
        raise OperatorNameError(f"an operator name has at most {MAX_NAME_CHARS} characters")
    if not _NAME.fullmatch(name):
        raise OperatorNameError(
            "an operator name uses only ASCII letters, digits, '.', '-' and '_', "
            "and starts with a letter or digit"
        )
    if name.lower() in RESERVED_NAMES:
        raise OperatorNameError(f"{name!r} is reserved")
    return name


def secret_hash(secret: str) -> str:
    """SHA-256 (hex) of a token or session id.

    A plain hash is enough here, unlike for passwords: every secret hashed is 32 random bytes
    from `secrets`, so there is nothing to guess by brute force or dictionary, and a salted slow
    hash would only slow down every request. It still keeps a copy of the database from being
    usable as a list of credentials.
    """
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def new_secret() -> str:
    """A fresh random token or session id (32 bytes, URL-safe text)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def add_operator(
    session: Session, *, name: str, role: str, now: dt.datetime
) -> tuple[OperatorAccount, str]:
    """Create an operator; returns it and its token (shown once: only its hash is stored)."""
    check_name(name)
    existing = session.exec(
        select(OperatorAccount).where(col(OperatorAccount.name) == name)
    ).first()
    if existing is not None:
        state = "revoked" if existing.revoked_at is not None else "active"
        raise OperatorExistsError(f"an operator named {name!r} exists already ({state})")
    token = new_secret()
    account = OperatorAccount(name=name, role=role, token_hash=secret_hash(token), created_at=now)
    session.add(account)
    session.flush()
    return account, token


def list_operators(session: Session) -> list[OperatorAccount]:
    """Every operator, revoked ones included, in the order they were added."""
    return list(session.exec(select(OperatorAccount).order_by(col(OperatorAccount.id))))


def revoke_operator(session: Session, *, name: str, now: dt.datetime) -> int:
    """Revoke the operator `name` and end its sessions; returns how many sessions ended."""
    account = session.exec(
        select(OperatorAccount)
        .where(col(OperatorAccount.name) == name, col(OperatorAccount.revoked_at).is_(None))
        .with_for_update()
    ).first()
    if account is None:
        raise OperatorNotFoundError(f"no active operator named {name!r}")
    account.revoked_at = now
    session.add(account)
    return end_sessions(session, operator=name, now=now)


def operator_by_token(session: Session, token: str) -> OperatorAccount | None:
    """The active operator whose token this is, or None."""
    digest = secret_hash(token)
    account = session.exec(
        select(OperatorAccount).where(
            col(OperatorAccount.token_hash) == digest, col(OperatorAccount.revoked_at).is_(None)
        )
    ).first()
    # The lookup is by hash; the final compare is constant-time all the same.
    if account is None or not hmac.compare_digest(account.token_hash, digest):
        return None
    return account


@dataclass(frozen=True)
class SessionGrant:
    """A new session: the id for the cookie (never stored) and when it expires."""

    session_id: str
    expires_at: dt.datetime


def _binding(credential_hash: str, nonce: str) -> str:
    # Keyed by the hash of the token that opened the session: who holds the session id cannot
    # compute it for another token, and a changed token no longer matches it.
    mac = hmac.new(credential_hash.encode(), nonce.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:18]).decode()


def bound_to(session_id: str, credential_hash: str) -> bool:
    """True when the session id was issued for the token whose hash is `credential_hash`
    (sessions follow their credentials: docs/rules.md Robustness rules)."""
    nonce, dot, mac = session_id.rpartition(".")
    return bool(dot) and hmac.compare_digest(
        mac.encode(), _binding(credential_hash, nonce).encode()
    )


def start_session(
    session: Session,
    *,
    operator: str,
    role: str,
    credential_hash: str,
    now: dt.datetime,
    lifetime: dt.timedelta,
) -> SessionGrant:
    """A new console session for `operator`, opened with the token whose hash is
    `credential_hash`; only the hash of its id is stored.

    The id carries a MAC of that token's hash (`bound_to`), so the session ends by itself when
    the token stops being what proves the operator (a changed PAYRECON_ADMIN_TOKEN).
    """
    nonce = new_secret()
    session_id = f"{nonce}.{_binding(credential_hash, nonce)}"
    expires = now + lifetime
    session.add(
        OperatorSession(
            id_hash=secret_hash(session_id),
            operator=operator,
            role=role,
            created_at=now,
            expires_at=expires,
        )
    )
    return SessionGrant(session_id, expires)


def live_session(session: Session, session_id: str, *, now: dt.datetime) -> OperatorSession | None:
    """The session with this id if it has not ended or expired, and its operator is active.

    An operator's session must also be bound to the operator's token (`bound_to`); the
    bootstrap admin's is checked by the caller, which alone knows PAYRECON_ADMIN_TOKEN.
    """
    row = session.exec(
        select(OperatorSession).where(col(OperatorSession.id_hash) == secret_hash(session_id))
    ).first()
    if row is None or row.ended_at is not None or row.expires_at <= now:
        return None
    if row.operator != "admin":
        # Revoking ends sessions at once; checking the operator too covers a session started
        # in the instant between the revocation's read and its commit.
        active = session.exec(
            select(OperatorAccount.token_hash).where(
                col(OperatorAccount.name) == row.operator,
                col(OperatorAccount.revoked_at).is_(None),
            )
        ).first()
        if active is None or not bound_to(session_id, active):
            return None
    return row


def end_session(session: Session, session_id: str, *, now: dt.datetime) -> OperatorSession | None:
    """End the session with this id (logout); returns it, or None if it was not live."""
    row = live_session(session, session_id, now=now)
    if row is None:
        return None
    row.ended_at = now
    session.add(row)
    return row


def end_sessions(session: Session, *, operator: str | None, now: dt.datetime) -> int:
    """End every live session of `operator` (of everyone when None); returns how many."""
    ended = col(OperatorSession.ended_at).is_(None) & (col(OperatorSession.expires_at) > now)
    which = ended if operator is None else ended & (col(OperatorSession.operator) == operator)
    result = session.execute(update(OperatorSession).where(which).values(ended_at=now))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
