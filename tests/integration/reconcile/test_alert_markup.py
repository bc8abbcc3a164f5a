"""Alerts reach self-hosted chat and push services as plain text: real local fakes over HTTP.

Each fake is a Starlette app on 127.0.0.1 recording exactly what apprise posts (Rocket.Chat
and Mattermost incoming webhooks, a Matrix webhook bridge, ntfy, a generic JSON receiver).
Markdown-rendering services must get text a CommonMark renderer shows as written with no
markup; plain-text services get the words as written, with `@channel`-style mentions defanged.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from html import unescape
from typing import Any

from markdown_it import MarkdownIt
from sqlalchemy import Engine

from ledger.db import write_session
from ledger.queries import ExpectedTransfer, register_expected
from payrecon.settings import load_settings
from provider.models import Transaction
from reconcile.alert_markup import ZERO_WIDTH_SPACE
from reconcile.alert_text import TransferFacts, finding_alert
from reconcile.alerts import AppriseSink
from reconcile.poller import run_pass
from tests.integration.reconcile.helpers import FakeLookup
from tests.support.servers import running_server

HOSTILE = "*BOLD* _it_ <b>x</b> <!channel> [c](x) `tick` <https://evil.example|go> @channel @all"
LIVE = ("*BOLD*", "_it_", "<b>", "<!channel>", "[c](x)", "`tick`", "<https://", "@channel", "@all")
T0 = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)


class Capture:
    """A local service answering 200 to every POST and keeping (path, headers, body)."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict[str, str], Any]] = []

    def app(self) -> Any:
        """The Starlette app."""
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def record(request: Request) -> JSONResponse:
            raw = await request.body()
            is_json = request.headers.get("content-type", "").startswith("application/json")
            body = await request.json() if is_json and raw else raw.decode()
            self.posts.append((request.url.path, dict(request.headers), body))
            return JSONResponse({"ok": True, "success": True, "id": "1"})

        return Starlette(routes=[Route("/{path:path}", record, methods=["POST", "PUT"])])


def _alert() -> tuple[str, str]:
    facts = TransferFacts(HOSTILE, "TRF_1", "failed", False, None, None, None, None, 5_000, 10)
    return finding_alert("orphan_event", f"reason {HOSTILE}", facts)


def _send(url_of: Any, title: str, body: str) -> tuple[str, dict[str, str], Any]:
    capture = Capture()
    with running_server(capture.app()) as base:
        sink = AppriseSink([url_of(base.removeprefix("http://"))], allow_insecure=True, timeout=5)
        assert sink.send(title, body) is None
    [post] = capture.posts
    return post


def _rendered(text: str) -> tuple[set[str], str]:
    html = MarkdownIt("commonmark").render(text)
    shown = unescape(re.sub(r"<[^>]+>", "", html)).replace(ZERO_WIDTH_SPACE, "")
    return set(re.findall(r"</?([a-z0-9]+)", html)), " ".join(shown.split())


def _assert_inert_markdown(text: str, *, title: str, body: str) -> None:
    for live in LIVE:
        assert live not in text
    tags, shown = _rendered(text)
    assert tags <= {"p", "br", "h1"}  # h1: apprise's own heading for the title
    assert " ".join(f"{title} {body}".split()) in shown


def test_rocket_chat_gets_markdown_escaped_text_that_reads_as_written() -> None:
    """Rocket.Chat (webhook mode), even with `?format=text` in the URL, gets inert Markdown."""
    title, body = _alert()
    path, _, payload = _send(
        lambda host: f"rocket://payrecon@{host}/?webhook=abc/def&mode=webhook&format=text",
        title,
        body,
    )
    assert path == "/hooks/abc/def"
    _assert_inert_markdown(payload["text"], title=title, body=body)


def test_mattermost_gets_markdown_escaped_text_that_reads_as_written() -> None:
    """Mattermost renders Markdown in plain webhook text: it gets escaped, defanged text."""
    title, body = _alert()
    path, _, payload = _send(lambda host: f"mmost://{host}/tokenabc", title, body)
    assert path == "/hooks/tokenabc"
    _assert_inert_markdown(payload["text"], title=title, body=body)


def test_matrix_gets_plain_text_with_room_mentions_defanged() -> None:
    """A Matrix webhook gets `format: plain`, the words as written, `@room`-style pings broken."""
    title, body = _alert()
    path, _, payload = _send(lambda host: f"matrix://bot:tok@{host}/?mode=matrix", title, body)
    assert path == "/api/v1/matrix/hook/tok"
    assert payload["format"] == "plain"
    assert "@channel" not in payload["text"] and "@all" not in payload["text"]
    assert payload["text"].replace(ZERO_WIDTH_SPACE, "") == f"{title}\r\n{body}"


def test_ntfy_gets_plain_text_without_the_markdown_switch() -> None:
    """ntfy renders Markdown only when asked: no Markdown header, the words as written."""
    title, body = _alert()
    _, headers, payload = _send(lambda host: f"ntfy://{host}/alerts?format=markdown", title, body)
    assert "x-markdown" not in {name.lower() for name in headers}
    assert payload["title"].replace(ZERO_WIDTH_SPACE, "") == title
    assert payload["message"].replace(ZERO_WIDTH_SPACE, "") == body
    assert "@channel" not in payload["message"]


def test_json_receiver_gets_the_words_exactly_as_written() -> None:
    """A generic JSON webhook (a machine) gets title and body untouched."""
    title, body = _alert()
    _, _, payload = _send(lambda host: f"json://{host}/hook?format=html", title, body)
    assert (payload["title"], payload["message"]) == (title, body)


def test_a_hostile_reference_reaches_rocket_chat_inert_through_a_pass(engine: Engine) -> None:
    """A transfer whose reference carries markup raises a finding whose alert arrives escaped."""
    reference = "INV*BOLD*_it_<!channel>[c](x)@here"
    with write_session(engine) as session:
        register_expected(session, ExpectedTransfer(reference, 10_000, 100), now=T0)
    answer = Transaction(
        reference="TRF_1",
        merchant_reference=reference,
        type="transfer",
        amount=10_100,
        fee=100,
        status="successful",
    )
    capture = Capture()
    with running_server(capture.app()) as base:
        host = base.removeprefix("http://")
        url = f"rocket://payrecon@{host}/?webhook=abc/def&mode=webhook"
        sink = AppriseSink([url], allow_insecure=True, timeout=5)
        settings = load_settings(database_url="sqlite://", check_backoff=0)
        summary = asyncio.run(
            run_pass(engine, FakeLookup({reference: answer}), settings, now=T0, sink=sink)
        )
    assert summary.alerts_sent == 1
    [(_, _, payload)] = capture.posts
    text = payload["text"]
    assert reference not in text and "@here" not in text
    tags, shown = _rendered(text)
    assert tags <= {"p", "br", "h1"}
    assert f"amount_mismatch on transfer {reference}" in shown
