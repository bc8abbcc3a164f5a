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
        {"secret_key": "sk_test_short"},
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
