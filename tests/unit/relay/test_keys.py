"""Endpoint secrets: made fresh, sealed under the configured keys, opened by any of them."""

from __future__ import annotations

import base64

import pytest

from relay.errors import SecretKeyError
from relay.keys import SECRET_BYTES, SecretBox, check_keys, new_secret

KEY_A = "a" * 32 + "-first-key"
KEY_B = "b" * 32 + "-second-key"


def test_new_secrets_are_whsec_with_32_random_bytes() -> None:
    """Each secret is `whsec_` and base64 of 32 bytes, never the same twice."""
    secrets = {new_secret() for _ in range(50)}
    assert len(secrets) == 50
    for secret in secrets:
        assert secret.startswith("whsec_")
        assert len(base64.b64decode(secret.removeprefix("whsec_"))) == SECRET_BYTES


def test_a_sealed_secret_opens_to_itself_and_does_not_show_it() -> None:
    """seal → open is the identity, and the sealed text holds no part of the secret."""
    box = SecretBox([KEY_A])
    secret = new_secret()
    sealed = box.seal(secret)
    assert box.open(sealed) == secret
    assert secret.removeprefix("whsec_")[:12] not in sealed


def test_a_box_without_the_sealing_key_cannot_open() -> None:
    """A secret sealed under one key is a SecretKeyError for a box with only another key."""
    sealed = SecretBox([KEY_A]).seal(new_secret())
    with pytest.raises(SecretKeyError, match="no key"):
        SecretBox([KEY_B]).open(sealed)
    with pytest.raises(SecretKeyError):
        SecretBox([KEY_B]).reseal(sealed)


def test_opening_again_gives_the_same_secret_and_a_tampered_copy_still_fails() -> None:
    """A box that opened a sealed value answers it again, while a changed value (another
    cache key) is still a SecretKeyError and the cache stays bounded."""
    box = SecretBox([KEY_A])
    secret = new_secret()
    sealed = box.seal(secret)
    assert box.open(sealed) == secret
    assert box.open(sealed) == secret
    with pytest.raises(SecretKeyError):
        box.open(sealed[:-4] + ("AAAA" if not sealed.endswith("AAAA") else "BBBB"))
    for _ in range(1100):
        box.open(box.seal(new_secret()))
    assert len(box._opened) <= 1024
    assert box.open(sealed) == secret


def test_tampered_sealed_text_is_a_secret_key_error() -> None:
    """A sealed value changed in the database does not open."""
    box = SecretBox([KEY_A])
    sealed = box.seal(new_secret())
    with pytest.raises(SecretKeyError):
        box.open(sealed[:-4] + ("AAAA" if not sealed.endswith("AAAA") else "BBBB"))


def test_key_rotation_opens_old_secrets_and_reseals_under_the_new_key() -> None:
    """With the new key first, old secrets still open; reseal makes them open under the new
    key alone."""
    secret = new_secret()
    old = SecretBox([KEY_A]).seal(secret)
    rotating = SecretBox([KEY_B, KEY_A])
    assert rotating.open(old) == secret
    resealed = rotating.reseal(old)
    assert SecretBox([KEY_B]).open(resealed) == secret


def test_no_keys_is_a_secret_key_error_naming_the_setting() -> None:
    """An empty key list cannot make a box; the message names PAYRECON_RELAY_KEYS."""
    with pytest.raises(SecretKeyError, match="PAYRECON_RELAY_KEYS"):
        SecretBox([])


def test_short_or_missing_keys_are_refused() -> None:
    """check_keys refuses a key under 32 characters and a value of only commas."""
    assert check_keys(f" {KEY_A} , {KEY_B} ") == [KEY_A, KEY_B]
    with pytest.raises(ValueError, match="at least 32"):
        check_keys("short")
    with pytest.raises(ValueError, match="no key"):
        check_keys(" , ")


def test_the_box_repr_hides_its_keys() -> None:
    """repr(box) shows no key."""
    box = SecretBox([KEY_A])
    assert KEY_A not in repr(box) and "a" * 10 not in repr(box)
