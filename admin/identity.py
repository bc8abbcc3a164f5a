"""THROW-AWAY STUB of helper X's identity interface (replaced when branch `identity` merges)."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlmodel import Session
from starlette.requests import Request
from starlette.responses import Response

from admin.auth import admin_only

Handler = Callable[[Request], Awaitable[Response]]


class Role(enum.StrEnum):
    """Stub."""

    VIEWER = "viewer"
    FINANCE = "finance"
    ADMIN = "admin"

    def allows(self, needed: Role) -> bool:
        """Stub."""
        order = [Role.VIEWER, Role.FINANCE, Role.ADMIN]
        return order.index(self) >= order.index(needed)


@dataclass(frozen=True)
class Operator:
    """Stub."""

    name: str
    role: Role


def requires(role: Role) -> Callable[[Handler], Handler]:
    """Stub: the admin token only."""

    def wrap(handler: Handler) -> Handler:
        async def inner(request: Request) -> Response:
            request.state.operator = Operator("admin", Role.ADMIN)
            return await handler(request)

        return admin_only(inner)

    return wrap


page = requires


def current_operator(request: Request) -> Operator:
    """Stub."""
    operator: Operator = request.state.operator
    return operator


def csrf_token(request: Request) -> str:
    """Stub."""
    return "dummy"


def audit(
    request: Request, session: Session, action: str, subject: str | None, detail: str | None
) -> None:
    """Stub: records nothing."""
