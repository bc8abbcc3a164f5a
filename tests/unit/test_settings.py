"""Settings: defaults, one clear error naming the variable, secrets hidden."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger.db import normalise_url
from payrecon.errors import ConfigError
from payrecon.logconfig import Redactor
from payrecon.settings import load_settings, secret_tokens, secret_values, unknown_names
from tests.support.secrets import ALERT_URLS, DATABASE_PASSWORD, SHOWN_NEVER, secret_settings


def test_defaults_match_the_contract() -> None:
    """With nothing set, the documented defaults apply."""
    settings = load_settings()
    assert settings.database_url == "sqlite:///./payrecon.db"
    assert (settings.stale_after, settings.poll_interval, settings.not_found_limit) == (1800, 30, 3)
    assert (settings.check_backoff, settings.check_backoff_max) == (30, 1800)
    assert (settings.provider_concurrency, settings.provider_max_rps) == (8, 20)
    assert settings.max_body_bytes == 65536 and settings.provider_env == "sandbox"
    assert settings.webhook_hmac_header == "X-Webhook-Signature"
    assert (settings.alert_group_after, settings.alert_max_per_hour) == (5, 60)
    assert settings.alert_resolved is True and settings.console_url is None


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("PAYRECON_DATABASE_URL", "not a url"),
        ("PAYRECON_DATABASE_URL", "mysql://x/y"),
        ("PAYRECON_PROVIDER_BASE_URL", "ftp://provider"),
        ("PAYRECON_PROVIDER_BASE_URL", "https://api.provider.example/v1"),
        ("PAYRECON_PROVIDER_BASE_URL", "http://127.0.0.1:8100/v1/"),
        ("PAYRECON_PROVIDER_SECRET_KEY", "pk_live_123"),
        ("PAYRECON_PROVIDER_ENV", "staging"),
        ("PAYRECON_FEE_SCHEDULE", "0-10:1,5-20:2"),
        ("PAYRECON_ADMIN_TOKEN", "short"),
        ("PAYRECON_WEBHOOK_TOKEN", "short"),
        ("PAYRECON_WEBHOOK_ALLOWED_IPS", "10.0.0.0/8"),
        ("PAYRECON_WEBHOOK_STANDARD_SECRET", "nothwsec"),
        ("PAYRECON_STALE_AFTER", "-1"),
        ("PAYRECON_POLL_INTERVAL", "soon"),
        ("PAYRECON_ALERT_GROUP_AFTER", "0"),
        ("PAYRECON_ALERT_GROUP_AFTER", "many"),
        ("PAYRECON_ALERT_MAX_PER_HOUR", "-5"),
        ("PAYRECON_ALERT_RESOLVED", "perhaps"),
        ("PAYRECON_CONSOLE_URL", "ftp://ops.example.com"),
        ("PAYRECON_CONSOLE_URL", "https://user:pw@ops.example.com"),
        ("PAYRECON_CONSOLE_URL", "ops.example.com"),
        ("PAYRECON_REVERIFY_AFTER", "1h,2x"),
        ("PAYRECON_REVERIFY_AFTER", "24h,1h"),
        ("PAYRECON_REVERIFY_AFTER", ""),
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


def set_all_secrets(monkeypatch: pytest.MonkeyPatch, database_url: str) -> None:
    """Set every secret setting (database password included) to a recognisable value."""
    for name, value in secret_settings(database_url).items():
        monkeypatch.setenv(name, value)


def test_repr_and_str_of_settings_show_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """repr() and str() of Settings hide every secret, the database password and each alert
    URL, while still saying which settings are set."""
    set_all_secrets(monkeypatch, f"postgresql://payrecon:{DATABASE_PASSWORD}@db.example/ledger")
    settings = load_settings()
    for text in (repr(settings), str(settings)):
        assert [secret for secret in SHOWN_NEVER if secret in text] == []
        assert "payrecon:[redacted]@db.example/ledger" in text
        assert "'slack://[redacted]'" in text and "'mailtos://[redacted]'" in text
    assert settings.alert_urls == ALERT_URLS.split()  # the sink still gets the real URLs


def test_secret_values_cover_every_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """secret_values and secret_tokens (what logs and error lines are scrubbed of) hold every
    secret."""
    set_all_secrets(monkeypatch, f"postgresql://payrecon:{DATABASE_PASSWORD}@db.example/ledger")
    settings = load_settings()
    values = secret_values(settings) + secret_tokens(settings)
    assert [secret for secret in SHOWN_NEVER if secret not in values] == []


@pytest.mark.parametrize("scheme", ["postgres", "postgresql", "postgresql+psycopg"])
def test_postgresql_urls_are_accepted_in_every_spelling(
    monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    """postgres:// and postgresql:// both mean PostgreSQL through psycopg."""
    monkeypatch.setenv("PAYRECON_DATABASE_URL", f"{scheme}://u@127.0.0.1:5432/ledger")
    settings = load_settings()
    assert normalise_url(settings.database_url).drivername == "postgresql+psycopg"
    assert not settings.is_sqlite


def test_a_postgresql_driver_other_than_psycopg_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A driver payrecon does not ship (psycopg2, asyncpg) is a configuration error."""
    monkeypatch.setenv("PAYRECON_DATABASE_URL", "postgresql+asyncpg://u@127.0.0.1/ledger")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.variable == "PAYRECON_DATABASE_URL"


def test_unknown_names_come_once_with_the_closest_known_name(tmp_path: Path) -> None:
    """Misspelt PAYRECON_* names from the environment and the .env file are reported once
    each, with the closest setting; known names, other programs' names and the names payrecon's
    own tools read are not."""
    env_file = tmp_path / ".env"
    env_file.write_text("PAYRECON_WEBHOOK_TOKN=x\nPAYRECON_DATABSE_URL=y\nOTHER=1\n")
    environ = {
        "PAYRECON_DATABSE_URL": "sqlite:///x.db",
        "PAYRECON_STALE_AFTER": "60",
        "PAYRECON_SANDBOX_SECRET_KEY": "sk_test_x",
        "PAYRECON_ZZZ": "1",
        "HOME": "/root",
    }
    assert unknown_names(environ, str(env_file)) == [
        ("PAYRECON_DATABSE_URL", "PAYRECON_DATABASE_URL"),
        ("PAYRECON_ZZZ", None),
        ("PAYRECON_WEBHOOK_TOKN", "PAYRECON_WEBHOOK_TOKEN"),
    ]
    assert unknown_names({"PAYRECON_STALE_AFTER": "1"}, str(tmp_path / "absent.env")) == []


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("PAYRECON_ADMIN_TOKEN", "CHANGE-ME-admin-token-at-least-16-chars"),
        ("PAYRECON_WEBHOOK_TOKEN", "CHANGEMEwebhooktoken0123456789"),
        ("PAYRECON_WEBHOOK_SECRET", "please-change_me-now-0123"),
        ("PAYRECON_WEBHOOK_HMAC_SECRET", "hmac-ChangeMe-0123456789"),
        ("PAYRECON_PROVIDER_SECRET_KEY", "sk_live_CHANGE-ME"),
        ("PAYRECON_RELAY_KEYS", "CHANGE_ME_to_32_or_more_random_characters"),
        ("PAYRECON_RELAY_KEYS", "a-real-relay-key-of-at-least-32-chars,changeme" + "x" * 30),
        ("PAYRECON_DATABASE_URL", "postgresql://payrecon:CHANGE-ME@db.example/payrecon"),
        ("PAYRECON_ALERT_URLS", "slack://CHANGE_ME/CHANGE_ME/CHANGE_ME"),
    ],
)
def test_a_placeholder_secret_is_refused_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    """A token, key, secret, database password or alert URL holding CHANGE-ME, CHANGE_ME or
    CHANGEME (any case) is a configuration error naming the variable, never its value."""
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.variable == variable
    assert "placeholder" in str(caught.value) and value not in str(caught.value)


def test_words_near_the_placeholder_are_not_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the placeholder spellings count: `change` or `me` alone in a secret is fine, and a
    database named `changeme` is not a password."""
    monkeypatch.setenv("PAYRECON_ADMIN_TOKEN", "change-the-key-to-me-0123456789")
    monkeypatch.setenv("PAYRECON_DATABASE_URL", "postgresql://u:real-pass@db.example/changeme")
    settings = load_settings()
    assert settings.admin_token is not None


def test_relay_allow_networks_are_unset_by_default_and_read_as_cidrs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Unset allows nothing; a comma list of CIDRs is read; a bad one names the variable."""
    assert load_settings().relay_allow_networks == ()
    monkeypatch.setenv("PAYRECON_RELAY_ALLOW_NETWORKS", "127.0.0.0/8, ::1/128")
    assert [str(n) for n in load_settings().relay_allow_networks] == ["127.0.0.0/8", "::1/128"]
    monkeypatch.setenv("PAYRECON_RELAY_ALLOW_NETWORKS", "127.0.0.0/8,127.0.0.0/40")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert caught.value.variable == "PAYRECON_RELAY_ALLOW_NETWORKS"
    assert "127.0.0.0/40" in str(caught.value)


# The docs' own example alert URLs (docs/operations.md, .env.example) and a path a merchant
# would use for a JSON hook.
DOC_ALERT_URLS = (
    "slack://TokenA/TokenB/TokenC/#payments-ops "
    "mailtos://user:password@smtp.example.com?to=ops@example.com "
    "jsons://hooks.example.com/payrecon/alerts"
)


def _redactor(monkeypatch: pytest.MonkeyPatch, urls: str) -> Redactor:
    monkeypatch.setenv("PAYRECON_ALERT_URLS", urls)
    settings = load_settings()
    return Redactor(secret_values(settings), secret_tokens(settings))


def test_alert_url_redaction_leaves_ordinary_words_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the docs' example alert URLs configured, a pass summary and an alert title keep
    their words (`alerts_sent`, `payrecon:`), while the URLs' tokens and password are hidden."""
    redactor = _redactor(monkeypatch, DOC_ALERT_URLS)
    line = (
        '{"event": "reconcile_pass", "alerts_sent": 2, "title": "payrecon: amount_mismatch on '
        'transfer T-1", "to": "TokenA/TokenB/TokenC", "credential": "password", "token": "TokenB"}'
    )
    scrubbed = redactor.scrub_line(None, "info", line)
    assert '"alerts_sent": 2' in scrubbed
    assert '"title": "payrecon: amount_mismatch on transfer T-1"' in scrubbed
    assert '"to": "[redacted]/[redacted]/[redacted]"' in scrubbed
    assert '"credential": "[redacted]"' in scrubbed and '"token": "[redacted]"' in scrubbed
    assert redactor.scrub("sent via jsons://hooks.example.com/payrecon/alerts") == (
        "sent via [redacted]"
    )


def test_alert_url_tokens_are_hidden_as_values_not_inside_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Slack token is hidden where it stands alone, and a word that merely contains it (or
    that it merely contains) is left as it is."""
    redactor = _redactor(monkeypatch, "slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ")
    assert redactor.scrub("token T1JJ3T3L2, again:T1JJ3T3L2.") == (
        "token [redacted], again:[redacted]."
    )
    assert redactor.scrub("XT1JJ3T3L2 T1JJ3T3L2_old") == "XT1JJ3T3L2 T1JJ3T3L2_old"
