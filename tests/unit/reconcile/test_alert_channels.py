"""Alerts reach Slack and e-mail as plain text: what each server would receive, captured in-process.

apprise's Slack plugin posts through `requests.request` and its e-mail plugin talks through
`smtplib.SMTP`; both are replaced here by recorders, so the exact webhook payload and the exact
SMTP message are asserted on without any network.
"""

from __future__ import annotations

import email
import json
import smtplib
from email import policy
from email.message import EmailMessage
from html import escape
from types import SimpleNamespace
from typing import Any

import pytest
import requests

from reconcile.alert_text import TransferFacts, finding_alert
from reconcile.alerts import AppriseSink

SLACK = "slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ"
MAIL = "mailtos://user:pw@example.com?to=ops@example.com"
HOSTILE_REFERENCE = "<!channel> <https://evil.example|Click to re-verify>"
HOSTILE_DETAIL = (
    'reason <a href="https://evil.example/login"><img src="https://evil.example/p.png"></a> '
    "& <@U024BE7LH> *urgent*"
)


class SlackWire:
    """Records every request apprise's Slack plugin makes and answers like Slack's webhook."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []

    def __call__(self, method: str, url: str, data: Any = None, **_: Any) -> SimpleNamespace:
        self.posts.append({"method": method, "url": url, "payload": json.loads(data)})
        return SimpleNamespace(status_code=200, content=b"ok")


class SmtpWire:
    """Stands in for `smtplib.SMTP`: records each message as the SMTP server would get it."""

    messages: list[str]

    def __init__(self, host: str, port: int, *_: Any, **__: Any) -> None:
        self.host = host

    def starttls(self, **_: Any) -> None:
        """STARTTLS always succeeds."""

    def login(self, user: str, password: str) -> None:
        """Any credentials are accepted."""

    def sendmail(self, sender: str, recipients: list[str], message: str) -> dict[str, Any]:
        """Keep the message; no recipient is refused."""
        type(self).messages.append(message)
        return {}

    def quit(self) -> None:
        """Nothing to close."""


@pytest.fixture
def slack(monkeypatch: pytest.MonkeyPatch) -> SlackWire:
    """Slack's webhook endpoint, in-process."""
    wire = SlackWire()
    monkeypatch.setattr(requests, "request", wire)
    return wire


@pytest.fixture
def smtp(monkeypatch: pytest.MonkeyPatch) -> type[SmtpWire]:
    """An SMTP server, in-process."""
    monkeypatch.setattr(SmtpWire, "messages", [], raising=False)
    monkeypatch.setattr(smtplib, "SMTP", SmtpWire)
    monkeypatch.setattr(smtplib, "SMTP_SSL", SmtpWire)
    return SmtpWire


def _hostile_alert() -> tuple[str, str]:
    facts = TransferFacts(
        HOSTILE_REFERENCE, "TRF_1", "failed", False, None, None, None, None, 5_000, 10
    )
    return finding_alert("orphan_event", HOSTILE_DETAIL, facts)


def test_slack_receives_webhook_text_escaped_and_without_mrkdwn(slack: SlackWire) -> None:
    """Slack gets `<`, `>`, `&` escaped in title and body and mrkdwn off, so nothing is live."""
    title, body = _hostile_alert()
    assert HOSTILE_REFERENCE in title and HOSTILE_DETAIL in body
    sink = AppriseSink([SLACK + "?format=markdown"], allow_insecure=False, timeout=5)
    assert sink.send(title, body) is None
    [post] = slack.posts
    payload = post["payload"]
    assert payload["mrkdwn"] is False
    [attachment] = payload["attachments"]
    assert attachment["title"] == escape(title, quote=False)
    assert attachment["text"] == escape(body, quote=False)
    wire = json.dumps(payload, ensure_ascii=False)
    for live in ("<!channel>", "<https://", "<a href", "<img", "<@U024BE7LH>"):
        assert live not in wire


def test_email_is_plain_text_only_with_the_words_as_written(smtp: type[SmtpWire]) -> None:
    """The e-mail has one text/plain part holding the alert verbatim and no HTML part at all."""
    title, body = _hostile_alert()
    sink = AppriseSink([MAIL], allow_insecure=False, timeout=5)
    assert sink.send(title, body) is None
    [raw] = smtp.messages
    message = email.message_from_string(raw, policy=policy.default)
    assert isinstance(message, EmailMessage)
    types = [part.get_content_type() for part in message.walk()]
    assert types == ["text/plain"]
    assert message["Subject"] == title
    assert message.get_content().strip() == body
