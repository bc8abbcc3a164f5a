"""Alert text (money in naira) and the outbound alert URL policy."""

from __future__ import annotations

import pytest

from reconcile.alert_text import TransferFacts, finding_alert
from reconcile.alerts import check_alert_url
from reconcile.errors import AlertURLError


def test_alert_names_both_references_amounts_and_advice() -> None:
    """The alert says what happened, which transfer, the figures in naira and what to do."""
    facts = TransferFacts(
        "R-1", "TRF_9", "successful", True, 100_000, 1_000, 100_100, 1_000, None, None
    )
    title, body = finding_alert(
        "amount_mismatch", "expected 100000 kobo; provider amount 100100 kobo", facts
    )
    assert "R-1" in title
    assert "TRF_9" in body
    assert "₦1,001.00" in body
    assert "What to do:" in body
    assert "kobo" not in body


@pytest.mark.parametrize(
    "url",
    [
        "json://alerts.example.com/hook",
        "xml://alerts.example.com/hook",
        "form://alerts.example.com/hook",
        "mailto://user:pw@example.com",
        "jsons://127.0.0.1/hook",
        "jsons://localhost/hook",
        "jsons://10.1.2.3/hook",
        "jsons://192.168.0.5:8443/hook",
        "jsons://[::1]/hook",
        "jsons://169.254.169.254/latest",
        "nonsense://whatever",
    ],
)
def test_insecure_or_private_alert_urls_are_refused(url: str) -> None:
    """Plain-text schemes, loopback/private hosts and unknown schemes are refused."""
    with pytest.raises(AlertURLError):
        check_alert_url(url, allow_insecure=False)


@pytest.mark.parametrize(
    "url",
    [
        "jsons://alerts.example.com/hook",
        "mailtos://user:pw@example.com",
        "slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ",
    ],
)
def test_secure_public_alert_urls_pass(url: str) -> None:
    """TLS schemes to public hosts and vendor services are allowed."""
    check_alert_url(url, allow_insecure=False)


def test_allow_insecure_permits_local_plain_json() -> None:
    """PAYRECON_ALERT_ALLOW_INSECURE lets tests post plain JSON to loopback."""
    check_alert_url("json://127.0.0.1:9999/hook", allow_insecure=True)
    with pytest.raises(AlertURLError):
        check_alert_url("json://127.0.0.1:9999/hook", allow_insecure=False)
