"""One value for every kind of secret payrecon holds, and the list of what must never show."""

from __future__ import annotations

# Every kind of secret, with values no other setting or word contains.
ALL_SECRETS = {
    "PAYRECON_PROVIDER_SECRET_KEY": "sk_test_providerkey0a1b2c3d",
    "PAYRECON_WEBHOOK_SECRET": "webhook-shared-secret-4e5f6a",
    "PAYRECON_WEBHOOK_TOKEN": "urltoken7b8c9d0e1f2a3b4c",
    "PAYRECON_WEBHOOK_HMAC_SECRET": "hmac-secret-5d6e7f8a9b0c",
    "PAYRECON_WEBHOOK_STANDARD_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    "PAYRECON_ADMIN_TOKEN": "admin-token-1c2d3e4f5a6b",
    "PAYRECON_RELAY_KEYS": "relaykey-9f8e7d6c5b4a-3928171605f4e3d2c1b0",
}
DATABASE_PASSWORD = "db-pass-w0rd%40Q9"  # percent-encoded `@` as it sits in a URL
ALERT_URLS = (
    "slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ "
    "mailtos://alerts:mail-pass-7Hq2@smtp.example.com?to=ops@example.com"
)
# What must never be shown: the values above, the database password as written and decoded,
# each alert URL and each credential inside one.
SHOWN_NEVER = [
    *ALL_SECRETS.values(),
    DATABASE_PASSWORD,
    "db-pass-w0rd@Q9",
    *ALERT_URLS.split(),
    "T1JJ3T3L2",
    "A1BRTD4JD",
    "TIiajkdnlazkcOXrIdevi7FQ",
    "mail-pass-7Hq2",
]


def secret_settings(database_url: str) -> dict[str, str]:
    """PAYRECON_* variables setting every secret, with the ledger at `database_url`."""
    return {**ALL_SECRETS, "PAYRECON_DATABASE_URL": database_url, "PAYRECON_ALERT_URLS": ALERT_URLS}


def with_password(database_url: str) -> str:
    """`database_url` carrying DATABASE_PASSWORD when it is a PostgreSQL URL (the test server
    trusts every connection, so any password is accepted)."""
    if not database_url.startswith("postgresql"):
        return database_url
    scheme, _, rest = database_url.partition("://")
    user, _, host = rest.partition("@")
    return f"{scheme}://{user.partition(':')[0]}:{DATABASE_PASSWORD}@{host}"
