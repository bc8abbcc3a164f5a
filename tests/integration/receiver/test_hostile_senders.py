"""Senders that stall, trickle or repeat headers: a real server, on SQLite and PostgreSQL."""

from __future__ import annotations

import select
import socket
from urllib.parse import urlsplit

import httpx
from sqlalchemy import Engine, func
from sqlalchemy import select as sql_select

from ledger.db import read_session
from ledger.models import Delivery
from tests.support.apps import StartReceiver
from tests.support.webhooks import encode, success_body


def _deliveries(engine: Engine) -> int:
    with read_session(engine) as session:
        count = session.execute(sql_select(func.count()).select_from(Delivery)).scalar_one()
        return int(count)


def _trickle(url: str, body: bytes) -> bytes:
    """POST `body` one byte at a time, 50 ms apart, until the server answers; the answer."""
    parts = urlsplit(url)
    head = (
        f"POST /webhook HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head)
        for byte in body:  # bounded by the body's length
            readable, _, _ = select.select([sock], [], [], 0.05)
            if readable:
                break
            sock.sendall(bytes([byte]))
        answer = b""
        while chunk := sock.recv(65536):  # the server closes after its answer
            answer += chunk
        return answer


def test_a_body_trickled_past_the_body_timeout_gets_408_and_is_not_stored(
    start_receiver: StartReceiver, engine: Engine
) -> None:
    """A sender still sending its body at PAYRECON_BODY_TIMEOUT gets 408, nothing is stored,
    and the connection is closed."""
    body = encode(success_body("TRF_SLOW")) + b" " * 2000
    with start_receiver(body_timeout=0.5) as url:
        answer = _trickle(url, body)
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert b'"error":"body_timeout"' in answer
        assert b"connection: close" in answer.lower()
        assert _deliveries(engine) == 0
        # The next sender is served as usual.
        response = httpx.post(
            f"{url}/webhook",
            content=encode(success_body("TRF_FAST")),
            headers={"content-type": "application/json"},
        )
        assert response.status_code == 200
        assert _deliveries(engine) == 1


def test_forwarded_for_on_several_lines_is_read_as_one_list(
    start_receiver: StartReceiver, engine: Engine
) -> None:
    """From a trusted proxy, a second X-Forwarded-For line appended by the proxy names the
    sender: an allowlisted address on the first line no longer passes."""
    settings = {"trusted_proxies": "127.0.0.1", "webhook_allowed_ips": "203.0.113.7"}
    body = encode(success_body("TRF_XFF"))
    with start_receiver(**settings) as url:
        spoofed = httpx.post(
            f"{url}/webhook",
            content=body,
            headers=[
                ("content-type", "application/json"),
                ("x-forwarded-for", "203.0.113.7"),
                ("x-forwarded-for", "198.51.100.9"),
            ],
        )
        assert spoofed.status_code == 403
        assert _deliveries(engine) == 0
        genuine = httpx.post(
            f"{url}/webhook",
            content=body,
            headers=[
                ("content-type", "application/json"),
                ("x-forwarded-for", "198.51.100.9"),
                ("x-forwarded-for", "203.0.113.7"),
            ],
        )
        assert genuine.status_code == 200
        assert _deliveries(engine) == 1
