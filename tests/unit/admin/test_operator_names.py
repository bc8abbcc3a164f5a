"""Operator names: what is refused, and why a hash of the token is all that is kept."""

from __future__ import annotations

import pytest

from ledger.errors import OperatorNameError
from ledger.operators import MAX_NAME_CHARS, check_name, new_secret, secret_hash


@pytest.mark.parametrize("name", ["alice", "ops.finance-2", "A_1", "x" * MAX_NAME_CHARS])
def test_plain_names_are_accepted(name: str) -> None:
    """ASCII letters, digits, dot, dash and underscore make a name."""
    assert check_name(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "x" * (MAX_NAME_CHARS + 1),
        "<script>alert(1)</script>",
        '"><img src=x>',
        "ålice",
        "аlice",  # Cyrillic а
        "a\x00b",
        "a\nb",
        "a\tb",
        "bob smith",
        "-dash",
        ".dot",
        "cli:root",
        "admin",
        "ADMIN",
        "cli",
        "a\u202eb",
    ],
)
def test_hostile_or_reserved_names_are_refused(name: str) -> None:
    """Markup, control and non-ASCII characters, spaces, over-long and reserved names fail."""
    with pytest.raises(OperatorNameError):
        check_name(name)


def test_secrets_are_long_random_and_kept_as_sha256() -> None:
    """A token is 32 random bytes (43 URL-safe characters); its hash is 64 hex digits."""
    first, second = new_secret(), new_secret()
    assert len(first) == 43 and first != second
    assert len(secret_hash(first)) == 64 and secret_hash(first) != secret_hash(second)
    assert first not in secret_hash(first)
