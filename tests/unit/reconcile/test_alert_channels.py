"""Alerts reach Slack, Discord, Telegram and e-mail as plain text, captured in-process.

These services have fixed hosts, so no local fake can stand in for them: apprise's HTTP
plugins post through `requests.request`/`requests.post` and its e-mail plugin talks through
`smtplib.SMTP`; both are replaced here by recorders, so the exact payload and the exact
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
from markdown_it import MarkdownIt

from reconcile.alert_markup import ZERO_WIDTH_SPACE, defang_mentions
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
    """Records every request apprise's HTTP plugins make and answers 200 like Slack's webhook."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []

    def __call__(self, method: str, url: str, data: Any = None, **_: Any) -> SimpleNamespace:
        self.posts.append({"method": method, "url": url, "payload": json.loads(data)})
        body = b"ok" if "slack" in url else b'{"ok": true}'
        return SimpleNamespace(status_code=200, content=body, text=body.decode(), headers={})

    def post(self, url: str, data: Any = None, **kwargs: Any) -> SimpleNamespace:
        """`requests.post`, recorded the same way."""
        return self("POST", url, data, **kwargs)


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
    monkeypatch.setattr(requests, "post", wire.post)
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
    assert attachment["title"] == escape(defang_mentions(title), quote=False)
    assert attachment["text"] == escape(defang_mentions(body), quote=False)
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


def _markdown_shows(text: str) -> tuple[set[str], str]:
    """The HTML tags a CommonMark renderer makes of `text`, and the words a reader sees."""
    import re
    from html import unescape

    rendered = MarkdownIt("commonmark").render(text)
    tags = set(re.findall(r"</?([a-z0-9]+)", rendered))
    return tags, unescape(re.sub(r"<[^>]+>", "", rendered)).replace(ZERO_WIDTH_SPACE, "")


def test_discord_receives_markdown_escaped_text_and_no_live_mentions(slack: SlackWire) -> None:
    """Discord renders Markdown in plain content: it gets escaped text that reads as written."""
    title, body = _hostile_alert()
    body += "\n@everyone *BOLD* _it_ [c](x)"
    sink = AppriseSink(
        ["discord://123456/abcdefgh?format=markdown"], allow_insecure=False, timeout=5
    )
    assert sink.send(title, body) is None
    [post] = slack.posts
    content = post["payload"]["content"]
    assert "@everyone" not in content and "*BOLD*" not in content and "[c](x)" not in content
    tags, shown = _markdown_shows(content)
    assert tags <= {"p", "br"}
    assert " ".join(shown.split()) == " ".join(f"{title} {body}".split())


def test_telegram_receives_html_escaped_text(slack: SlackWire) -> None:
    """Telegram is sent HTML: every `<`, `>`, `&` of webhook text arrives as an entity."""
    title, body = _hostile_alert()
    sink = AppriseSink(
        ["tgram://123456789:abcdefg_hijklmnop/12345"], allow_insecure=False, timeout=5
    )
    assert sink.send(title, body) is None
    [post] = slack.posts
    assert post["payload"]["parse_mode"] == "HTML"
    text = post["payload"]["text"]
    assert escape(defang_mentions(body), quote=False) in text.replace("\r\n", "\n")
    for live in ("<!channel>", "<https://", "<a href", "<img", "<@U024BE7LH>"):
        assert live not in text


def test_teams_workflow_title_and_body_are_markdown_escaped(slack: SlackWire) -> None:
    """Teams (a workflow's adaptive card renders Markdown) gets escaped title and body."""
    title, body = _hostile_alert()
    sink = AppriseSink(
        ["workflows://prod.westeurope.logic.azure.com/wf1/sig1"], allow_insecure=False, timeout=5
    )
    assert sink.send(title, body) is None
    [post] = slack.posts
    blocks = post["payload"]["attachments"][0]["content"]["body"]
    texts = {block.get("id"): block["text"] for block in blocks if block["type"] == "TextBlock"}
    for part, original in ((texts["title"], title), (texts["body"], body)):
        assert "*urgent*" not in part and "[redacted]" not in part
        tags, shown = _markdown_shows(part)
        assert tags <= {"p", "br"}
        assert " ".join(shown.split()) == " ".join(original.split())
