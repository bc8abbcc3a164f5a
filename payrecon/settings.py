"""Settings read once from `PAYRECON_*` variables and a `.env` file."""

from __future__ import annotations

import datetime as dt
import difflib
import ipaddress
import os
import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from sqlalchemy.exc import ArgumentError

from ledger.db import normalise_url
from payrecon.errors import ConfigError
from payrecon.logconfig import REDACTED
from receiver.auth import standard_key
from reconcile.checks import DEFAULT_STALE_AFTER
from reconcile.collection_checks import DEFAULT_COLLECTION_GRACE
from reconcile.fees import FeeSchedule, parse_fee_schedule
from reconcile.reverify import DEFAULT_REVERIFY_AFTER, parse_ages
from relay.addresses import Network, parse_networks
from relay.errors import ScheduleError
from relay.keys import SecretBox, check_keys
from relay.schedule import DEFAULT_SCHEDULE, parse_schedule

MIN_TOKEN_LENGTH = 16
_PREFIX = "PAYRECON_"
ENV_FILE = ".env"

# PAYRECON_* names read by something other than Settings, so no "unknown setting" warning.
OTHER_NAMES = frozenset(
    {
        "PAYRECON_SANDBOX_SECRET_KEY",  # payrecon sandbox (sandbox/cli.py)
        "PAYRECON_SANDBOX_PUBLIC_KEY",
        "PAYRECON_FAILPOINT",  # crash tests of transfer send (payments/payouts.py)
        "PAYRECON_TEST_POSTGRES_URL",  # the test suite (tests/)
        "PAYRECON_REQUIRE_POSTGRES",
        "PAYRECON_REQUIRE_BROWSER",
        "PAYRECON_REQUIRE_YAML",
    }
)
# The shortest token of an alert URL hidden as a value (shorter ones are too likely to be
# ordinary words, and a URL's real tokens are long); the whole URL and its password always are.
_MIN_URL_TOKEN = 6
# The placeholders shipped in .env.example and deploy/kubernetes/secret.yaml (docs/rules.md:
# Robustness rules, "Secrets that were never set are refused"): CHANGE-ME, CHANGE_ME, CHANGEME.
_PLACEHOLDER = re.compile(r"change[-_]?me", re.IGNORECASE)
_SECRET_FIELDS = (
    "provider_secret_key",
    "webhook_secret",
    "webhook_token",
    "webhook_hmac_secret",
    "webhook_standard_secret",
    "admin_token",
    "relay_keys",
)


_PLACEHOLDER_MESSAGE = (
    "still holds the shipped placeholder (CHANGE-ME): set a real secret before starting payrecon"
)


def _split(value: Any, sep: str | None) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(sep) if part.strip()]
    return value


class Settings(BaseSettings):
    """Every setting of payrecon; secrets are `SecretStr` so they never print, and `repr` masks
    the database password and the alert URLs (plain strings, since the code needs them whole)."""

    model_config = SettingsConfigDict(
        env_prefix=_PREFIX, env_file=ENV_FILE, extra="ignore", frozen=True
    )

    database_url: str = "sqlite:///./payrecon.db"
    provider_base_url: str | None = None
    provider_secret_key: SecretStr | None = None
    provider_env: Literal["sandbox", "production"] = "sandbox"
    provider_timeout: float = Field(default=10.0, gt=0)

    webhook_secret: SecretStr | None = None
    webhook_secret_header: str = "X-Webhook-Secret"
    webhook_token: SecretStr | None = None
    webhook_allowed_ips: Annotated[list[str], NoDecode] = Field(default_factory=list)
    trusted_proxies: Annotated[list[str], NoDecode] = Field(default_factory=list)
    webhook_hmac_secret: SecretStr | None = None
    webhook_hmac_header: str = "X-Webhook-Signature"
    webhook_standard_secret: SecretStr | None = None
    admin_token: SecretStr | None = None
    # The console (docs/rules.md: Console, operators and audit): `1` drops the Secure flag from
    # the session cookie (plain-http tests only), how long a session lasts, and how many failed
    # logins from one address within the window get 429 (counted per process).
    insecure_cookies: bool = False
    session_hours: float = Field(default=8, gt=0, le=24 * 30)
    login_max_failures: int = Field(default=10, ge=1, le=10_000)
    login_window: int = Field(default=300, ge=1, le=86_400)
    max_body_bytes: int = Field(default=65536, ge=256, le=16 * 1024 * 1024)
    body_timeout: float = Field(default=10.0, gt=0, le=3600)
    header_timeout: float = Field(default=10.0, gt=0, le=3600)
    limit_concurrency: int = Field(default=500, ge=1, le=100_000)
    batch_max: int = Field(default=256, ge=1, le=10_000)

    stale_after: int = Field(default=DEFAULT_STALE_AFTER, ge=1)
    poll_interval: float = Field(default=30, gt=0)
    check_backoff: int = Field(default=30, ge=0)
    check_backoff_max: int = Field(default=1800, ge=0)
    not_found_limit: int = Field(default=3, ge=1)
    provider_concurrency: int = Field(default=8, ge=1, le=256)
    provider_max_rps: float = Field(default=20, ge=0)
    fee_schedule: FeeSchedule | None = None
    # Seconds after a collection's expires_at for its last check (docs/rules.md: Collections).
    collection_grace: int = Field(default=DEFAULT_COLLECTION_GRACE, ge=0, le=30 * 86400)
    # Ages after confirmation at which a success is looked up again (docs/rules.md: Reversals).
    reverify_after: Annotated[tuple[int, ...], NoDecode] = Field(
        default_factory=lambda: parse_ages(DEFAULT_REVERIFY_AFTER)
    )

    alert_urls: Annotated[list[str], NoDecode] = Field(default_factory=list)
    alert_allow_insecure: bool = False
    alert_timeout: float = Field(default=5.0, gt=0)
    # Alerts that group (README "Alerts"): findings of one kind in one pass beyond this many
    # go out as one message; more messages an hour than the cap become one "suppressed"
    # message; a resolved notice follows an alert whose findings all resolved (1, or 0: off).
    alert_group_after: int = Field(default=5, ge=1, le=100_000)
    alert_max_per_hour: int = Field(default=60, ge=1, le=100_000)
    alert_resolved: bool = True
    # The console's public address, for links in alerts (`https://ops.example.com`).
    console_url: str | None = None

    # The relay (docs/rules.md: Relay): delays between attempts after the first, seconds per
    # attempt, attempts in flight per worker, seconds of nothing but failures before an
    # endpoint is disabled, and the keys that seal endpoints' secrets (relay.keys).
    relay_retry_schedule: Annotated[tuple[float, ...], NoDecode] = Field(
        default_factory=lambda: parse_schedule(DEFAULT_SCHEDULE)
    )
    relay_timeout: float = Field(default=15.0, gt=0, le=300)
    relay_concurrency: int = Field(default=16, ge=1, le=1000)
    relay_disable_after: int = Field(default=432000, ge=60)
    relay_keys: SecretStr | None = None
    # Networks of the host's own addresses (loopback, link-local…) endpoints may still reach:
    # unset, none (docs/rules.md: Robustness rules); tests and the demo list 127.0.0.0/8.
    relay_allow_networks: Annotated[tuple[Network, ...], NoDecode] = ()
    # Statements (docs/rules.md "Statements and period tie-out"): how far apart a line's date and
    # its transfer's or collection's may be, and the largest file `statement import` reads.
    statement_date_window: Annotated[dt.timedelta, NoDecode] = dt.timedelta(days=2)
    statement_max_bytes: int = Field(default=200_000_000, ge=1024, le=2**40)
    # Days provider checks of settled transfers are kept (`payrecon checks prune`).
    checks_keep_days: int = Field(default=400, ge=1, le=100_000)
    # `reconcile run` / `relay run` serve /metrics here (docs/rules.md: Observability); unset,
    # they serve none unless --metrics-port says so.
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    metrics_host: str = "127.0.0.1"

    @field_validator(*_SECRET_FIELDS, mode="before")
    @classmethod
    def _not_a_placeholder(cls, value: Any) -> Any:
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if isinstance(text, str) and _PLACEHOLDER.search(text):
            raise ValueError(_PLACEHOLDER_MESSAGE)
        return value

    @field_validator("relay_allow_networks", mode="before")
    @classmethod
    def _networks(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_networks(value)  # ValueError names the bad item
        return value

    @field_validator("webhook_allowed_ips", "trusted_proxies", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        return _split(value, ",")

    @field_validator("alert_urls", mode="before")
    @classmethod
    def _space_list(cls, value: Any) -> Any:
        return _split(value, None)

    @field_validator("alert_urls")
    @classmethod
    def _alert_placeholders(cls, value: list[str]) -> list[str]:
        if any(_PLACEHOLDER.search(url) for url in value):
            raise ValueError(f"a URL {_PLACEHOLDER_MESSAGE}")
        return value

    @field_validator("console_url")
    @classmethod
    def _console_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError("must be an http:// or https:// address, e.g. https://ops.example.com")
        if parts.query or parts.fragment or parts.username or parts.password:
            raise ValueError("must be a plain address without query, fragment or credentials")
        return value.strip().rstrip("/")

    @field_validator("relay_retry_schedule", mode="before")
    @classmethod
    def _schedule(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return parse_schedule(value)
            except ScheduleError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("statement_date_window", mode="before")
    @classmethod
    def _date_window(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_date_window(value)
        return value

    @field_validator("reverify_after", mode="before")
    @classmethod
    def _reverify_ages(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_ages(value)  # ValueError says which age is wrong
        return value

    @field_validator("relay_keys")
    @classmethod
    def _relay_keys(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            check_keys(value.get_secret_value())  # ValueError says what is wrong
        return value

    @field_validator("webhook_allowed_ips", "trusted_proxies")
    @classmethod
    def _addresses(cls, value: list[str]) -> list[str]:
        # Exact addresses only: the product never matches ranges (spec: no CIDR, no wildcard).
        return [str(ipaddress.ip_address(item)) for item in value]

    @field_validator("fee_schedule", mode="before")
    @classmethod
    def _fees(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_fee_schedule(value) if value.strip() else None
        return value

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        try:
            url = normalise_url(value)  # postgres:// and postgresql:// mean psycopg
        except ArgumentError as exc:
            raise ValueError("not a database URL") from exc
        if url.drivername not in {"sqlite", "sqlite+pysqlite", "postgresql+psycopg"}:
            raise ValueError("only sqlite:// and postgresql:// (psycopg) URLs are supported")
        if url.password is not None and _PLACEHOLDER.search(str(url.password)):
            raise ValueError(f"the password {_PLACEHOLDER_MESSAGE}")
        return value

    @field_validator("provider_base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        if not value.startswith(("http://", "https://")) or value[-3:] == "://":
            raise ValueError("must be an http:// or https:// URL")
        value = value.rstrip("/")
        if value.endswith("/v1"):
            # Every path of the spec already starts with /v1: a doubled /v1/v1/… reaches a
            # route the provider does not have, whose enveloped 404 reads as "not found".
            raise ValueError("must be the base address without /v1 (every path adds it)")
        return value

    @field_validator("provider_secret_key")
    @classmethod
    def _secret_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith("sk_"):
            raise ValueError("must be a secret key starting with sk_")
        return value

    @field_validator("webhook_token", "admin_token", "webhook_secret", "webhook_hmac_secret")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_TOKEN_LENGTH:
            raise ValueError(f"must be at least {MIN_TOKEN_LENGTH} characters")
        return value

    @field_validator("webhook_standard_secret")
    @classmethod
    def _standard_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            standard_key(value.get_secret_value())  # ValueError says what is wrong
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Settings:
        if self.check_backoff_max < self.check_backoff:
            raise ValueError("check_backoff_max: must not be below PAYRECON_CHECK_BACKOFF")
        if self.provider_env == "production" and (self.provider_base_url or "").startswith(
            "http://"
        ):
            # The secret key goes in every request's Authorization header.
            raise ValueError(
                "provider_base_url: production needs an https:// address, or the secret key "
                "would cross the network in clear (plain http is for a sandbox emulator)"
            )
        if self.webhook_token is not None and not self.webhook_token.get_secret_value().isalnum():
            raise ValueError("webhook_token: must be letters and digits only (it is a URL path)")
        return self

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        # SecretStr fields hide themselves; the database password and alert URLs are plain
        # strings, so they are masked here (repr and str both come through this).
        for name, value in super().__repr_args__():
            if name == "database_url":
                value = _masked_database_url(value)
            elif name == "alert_urls":
                value = [f"{urlsplit(url).scheme}://{REDACTED}" for url in value]
            yield name, value

    @property
    def is_sqlite(self) -> bool:
        """True when the ledger lives in a SQLite file."""
        return self.database_url.startswith("sqlite")

    def secret_box(self) -> SecretBox:
        """What seals and opens endpoints' secrets; SecretKeyError when PAYRECON_RELAY_KEYS is
        not set."""
        keys = [] if self.relay_keys is None else check_keys(self.relay_keys.get_secret_value())
        return SecretBox(keys)

    def provider_ready(self) -> bool:
        """True when both provider settings are present."""
        return self.provider_base_url is not None and self.provider_secret_key is not None


_WINDOW = re.compile(r"([0-9]{1,3})([dh])")


def parse_date_window(text: str) -> dt.timedelta:
    """PAYRECON_STATEMENT_DATE_WINDOW: whole days (`2d`) or hours (`36h`), at most 31 days;
    ValueError saying what is accepted."""
    match = _WINDOW.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"must be whole days or hours such as 2d or 36h, not {text!r}")
    number, unit = int(match.group(1)), match.group(2)
    window = dt.timedelta(days=number) if unit == "d" else dt.timedelta(hours=number)
    if window > dt.timedelta(days=31):
        raise ValueError("must be at most 31 days")
    return window


def load_settings(**overrides: Any) -> Settings:
    """Read settings from the environment; raise ConfigError naming the first bad variable."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else ""
        message = str(error["msg"]).removeprefix("Value error, ")
        if not field and ":" in message:
            field, _, message = message.partition(": ")
        raise ConfigError(_PREFIX + field.upper(), message) from None


def _masked_database_url(url: str) -> str:
    password = urlsplit(url).password
    if not password:
        return url
    return url.replace(f":{password}@", f":{REDACTED}@", 1)


def _alert_url_secrets(url: str) -> list[str]:
    # Hidden wherever they appear: the URL whole and its part after the scheme.
    return [url, url.partition("://")[2]]


def _looks_generated(value: str) -> bool:
    # A token a service generated, not a word of a path (`/payrecon/alerts`): a digit, or
    # upper and lower case mixed.
    return any(c.isdigit() for c in value) or (value.lower() != value and value.upper() != value)


def _alert_url_tokens(url: str) -> list[str]:
    # The credentials of an alert URL (its password; slack://T/B/C holds tokens in the path; a
    # host without a dot is a token too): values hidden only as whole words, never as part of
    # another word, so a path segment `alerts` leaves `alerts_sent` alone. With a real host,
    # only a segment that looks generated is a token, so `jsons://hooks.example.com/payrecon`
    # hides no `payrecon`.
    parts = urlsplit(url)
    # The password is hidden as a value whatever its length (the docs' example is `password`,
    # which must not take the word out of every log line).
    found = [p for p in {parts.password or "", unquote(parts.password or "")} if p]
    host = parts.netloc.rpartition("@")[2]  # as written: hostname is lower-cased
    candidates = [parts.username or "", *parts.path.split("/")]
    candidates += [value for _, value in parse_qsl(parts.query)]
    tokens_only = "." not in host
    if tokens_only:
        candidates.append(host)
    return found + [
        t
        for token in candidates
        for t in (token, unquote(token))
        if len(t) >= _MIN_URL_TOKEN and (tokens_only or _looks_generated(t))
    ]


def secret_values(settings: Settings) -> list[str]:
    """Every secret a log line, repr or error message must never show (spec: Settings),
    hidden wherever it appears; the alert URLs' tokens are in `secret_tokens`."""
    values = [
        value.get_secret_value()
        for value in settings.__dict__.values()
        if isinstance(value, SecretStr)
    ]
    password = urlsplit(settings.database_url).password
    if password:
        values += [password, unquote(password)]
    for url in settings.alert_urls:
        values += _alert_url_secrets(url)
    return [value for value in values if value]


def secret_tokens(settings: Settings) -> list[str]:
    """The alert URLs' passwords and tokens: hidden as whole values (a word of their own),
    never as a substring of another word (payrecon.logconfig.Redactor)."""
    return [token for url in settings.alert_urls for token in _alert_url_tokens(url)]


def unknown_names(
    environ: Mapping[str, str] | None = None, env_file: str = ENV_FILE
) -> list[tuple[str, str | None]]:
    """Each `PAYRECON_*` name set in the environment or the .env file that payrecon does not
    read, once, with the closest name it does read (or None)."""
    from dotenv import dotenv_values

    environ = os.environ if environ is None else environ
    names = [*environ, *dotenv_values(env_file)] if os.path.isfile(env_file) else [*environ]
    known = [name.upper() for name in Settings.model_fields]
    seen: set[str] = set()
    found: list[tuple[str, str | None]] = []
    for name in names:
        upper = name.upper()  # pydantic-settings reads names case-insensitively
        if not upper.startswith(_PREFIX) or upper in seen:
            continue
        seen.add(upper)
        if upper.removeprefix(_PREFIX) in known or upper in OTHER_NAMES:
            continue
        # Compared without the prefix every name shares, which would make anything look close.
        closest = difflib.get_close_matches(upper.removeprefix(_PREFIX), known, n=1)
        found.append((name, _PREFIX + closest[0] if closest else None))
    return found
