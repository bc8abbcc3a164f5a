"""Roles are ordered viewer < finance < admin, and CSRF tokens are bound to their secret."""

from __future__ import annotations

import pytest

from admin.identity import Role, csrf_for


@pytest.mark.parametrize(
    ("role", "allowed"),
    [
        (Role.VIEWER, {Role.VIEWER}),
        (Role.FINANCE, {Role.VIEWER, Role.FINANCE}),
        (Role.ADMIN, {Role.VIEWER, Role.FINANCE, Role.ADMIN}),
    ],
)
def test_a_role_allows_itself_and_the_roles_below(role: Role, allowed: set[Role]) -> None:
    """Each role may do what it and the roles below it may do, and nothing above."""
    assert {needed for needed in Role if role.allows(needed)} == allowed


def test_csrf_tokens_differ_per_secret_and_repeat_for_the_same() -> None:
    """The CSRF token is a function of the session id (or token): stable for it, new for another."""
    assert csrf_for("session-a") == csrf_for("session-a")
    assert csrf_for("session-a") != csrf_for("session-b")
