"""Settings: defaults, one clear error naming the variable, secrets hidden."""

from __future__ import annotations

import pytest

from payrecon.errors import ConfigError
from payrecon.settings import load_settings


def test_defaults_match_the_contract() -> None:
    """With nothing set, the documented defaults apply."""
    settings = load_settings()
    assert settings.database_url == "sqlite:///./payrecon.db"
    assert (settings.stale_after, settings.poll_interval, settings.not_found_limit) == (1800, 30, 3)
    assert (settings.check_backoff, settings.check_backoff_max) == (30, 1800)
    assert (settings.provider_concurrency, settings.provider_max_rps) == (8, 20)
    assert settings.max_body_bytes == 65536 and settings.provider_env == "sandbox"
    assert settings.webhook_hmac_header == "X-Webhook-Signature"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("PAYRECON_DATABASE_URL", "not a url"),
        ("PAYRECON_DATABASE_URL", "mysql://x/y"),
        ("PAYRECON_PROVIDER_BASE_URL", "ftp://provider"),
        ("PAYRECON_PROVIDER_SECRET_KEY", "pk_live_123"),
        ("PAYRECON_PROVIDER_ENV", "staging"),
        ("PAYRECON_FEE_SCHEDULE", "0-10:1,5-20:2"),
        ("PAYRECON_ADMIN_TOKEN", "short"),
        ("PAYRECON_WEBHOOK_TOKEN", "short"),
        ("PAYRECON_WEBHOOK_ALLOWED_IPS", "10.0.0.0/8"),
        ("PAYRECON_WEBHOOK_STANDARD_SECRET", "nothwsec"),
        ("PAYRECON_STALE_AFTER", "-1"),
        ("PAYRECON_POLL_INTERVAL", "soon"),
    ],
)
def test_a_bad_setting_names_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    """Each malformed setting raises ConfigError whose message starts with the variable."""
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.variable == variable
    assert str(caught.value).startswith(variable + ": ")


def test_contradictory_backoffs_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A maximum backoff below the base backoff is a contradiction."""
    monkeypatch.setenv("PAYRECON_CHECK_BACKOFF", "60")
    monkeypatch.setenv("PAYRECON_CHECK_BACKOFF_MAX", "10")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.variable == "PAYRECON_CHECK_BACKOFF_MAX"


def test_production_over_plain_http_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The production environment needs an https provider address; the sandbox may use http."""
    monkeypatch.setenv("PAYRECON_PROVIDER_BASE_URL", "http://sandbox:8100")
    assert load_settings().provider_base_url == "http://sandbox:8100"
    monkeypatch.setenv("PAYRECON_PROVIDER_ENV", "production")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.variable == "PAYRECON_PROVIDER_BASE_URL"
    assert "https://" in str(caught.value)
    monkeypatch.setenv("PAYRECON_PROVIDER_BASE_URL", "https://api.provider.example")
    assert load_settings().provider_env == "production"


def test_lists_are_split_and_secrets_hidden_from_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    """Comma and space lists parse; secret values never appear in repr."""
    monkeypatch.setenv("PAYRECON_WEBHOOK_ALLOWED_IPS", "192.0.2.1, 2001:db8::1")
    monkeypatch.setenv("PAYRECON_ALERT_URLS", "slack://a/b  jsons://host/path")
    monkeypatch.setenv("PAYRECON_PROVIDER_SECRET_KEY", "sk_test_supersecretvalue")
    monkeypatch.setenv("PAYRECON_ADMIN_TOKEN", "admin-secret-0123456789")
    settings = load_settings()
    assert settings.webhook_allowed_ips == ["192.0.2.1", "2001:db8::1"]
    assert settings.alert_urls == ["slack://a/b", "jsons://host/path"]
    assert "supersecretvalue" not in repr(settings)
    assert "admin-secret" not in repr(settings)


def test_a_dotenv_file_is_read(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Settings come from ./.env too."""
    (tmp_path / ".env").write_text("PAYRECON_STALE_AFTER=60\n")
    monkeypatch.chdir(tmp_path)
    assert load_settings().stale_after == 60
