"""SandboxConfig: generated keys per environment, and refusal of unusable values."""

from __future__ import annotations

import re

import pytest

from sandbox.config import SandboxConfig
from sandbox.errors import ConfigError


def test_generated_keys_follow_the_environment():
    """Sandbox keys are sk_test_/pk_test_, the other environment's are live, otp has 6 digits."""
    config = SandboxConfig()
    assert config.secret_key.startswith("sk_test_")
    assert config.public_key.startswith("pk_test_")
    assert config.other_secret_key.startswith("sk_live_")
    assert re.fullmatch(r"[0-9]{6}", config.otp)
    production = SandboxConfig(environment="production")
    assert production.secret_key.startswith("sk_live_")


def test_secrets_stay_out_of_repr():
    """Keys, otp and webhook secrets never appear in the repr."""
    config = SandboxConfig(webhook_hmac_secret="hmac-value-123")
    text = repr(config)
    for secret in (config.secret_key, config.public_key, config.otp, "hmac-value-123"):
        assert secret not in text


@pytest.mark.parametrize(
    "options",
    [
        {"environment": "staging"},
        {"secret_key": "sk_live_abcdefgh1"},
        {"public_key": "sk_test_abcdefgh1"},
        {"secret_key": "sk_test_"},
        {"secret_key": "sk_test_has space"},
        {"public_key": "pk_test_\u00e9"},
        {"otp": "1234567"},
        {"complete_after": -1.0},
        {"wallet_balance": -1},
        {"webhook_standard_secret": "whsec_***"},
        {"port": 0},
    ],
)
def test_unusable_values_raise_config_error(options):
    """A wrong-environment key, bad otp, negative numbers or a bad secret are refused."""
    with pytest.raises(ConfigError):
        SandboxConfig(**options)


@pytest.mark.parametrize(
    ("environment", "secret", "public"),
    [
        ("sandbox", "sk_test_accept", "pk_test_x"),
        ("sandbox", "sk_test_a", "pk_test_K3y.with~marks"),
        ("production", "sk_live_1", "pk_live_ab"),
    ],
)
def test_any_key_with_the_environments_prefix_is_accepted(environment, secret, public):
    """The spec fixes only the key prefix, so a short key like sk_test_accept is accepted as is."""
    config = SandboxConfig(environment=environment, secret_key=secret, public_key=public)
    assert (config.secret_key, config.public_key) == (secret, public)
