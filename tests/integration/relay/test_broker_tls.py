"""`rediss://` endpoints against a real Redis serving TLS only (a redis-server the test starts
on a free loopback port with a certificate it makes): the relay verifies the server's
certificate against the trusted CAs (SSL_CERT_FILE for a private CA, docs/relay.md) and
delivers over TLS; an untrusted certificate is a failed attempt, never a delivery."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from sqlalchemy import Engine

from ledger.models import RelayDelivery
from tests.support import relay as support
from tests.support.brokers import Message

STREAM = "payrecon-tls"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1, and its key."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def _client(port: int, cert: Path) -> redis.Redis:
    return redis.Redis(
        host="localhost", port=port, ssl=True, ssl_ca_certs=str(cert), socket_timeout=5
    )


@pytest.fixture
def tls_redis(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A redis-server answering TLS only on a free loopback port; (port, its certificate)."""
    server = shutil.which("redis-server")
    if server is None or shutil.which("openssl") is None:
        pytest.skip(
            "redis-server and openssl are needed for the TLS broker test (Debian: redis, openssl)"
        )
    cert, key = _certificate(tmp_path)
    port = _free_port()
    process = subprocess.Popen(
        [server, "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
         "--tls-cert-file", str(cert), "--tls-key-file", str(key),
         "--tls-ca-cert-file", str(cert), "--tls-auth-clients", "no",
         "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                _client(port, cert).ping()
                break
            except redis.RedisError:
                if process.poll() is not None or time.monotonic() > deadline:
                    out = process.stdout.read().decode(errors="replace") if process.stdout else ""
                    pytest.skip(f"redis-server could not start with TLS: {out[-300:]}")
                time.sleep(0.1)
        yield port, cert
    finally:
        process.terminate()
        process.wait(timeout=10)


def _messages(port: int, cert: Path) -> list[Message]:
    entries = _client(port, cert).xrange(STREAM)
    found = []
    for _entry, fields in entries:
        text = {k.decode(): v.decode() for k, v in fields.items()}
        headers = {k: text[k] for k in ("webhook-id", "webhook-timestamp", "webhook-signature")}
        found.append(Message(text["body"].encode(), headers, text["id"]))
    return found


def _delivered(engine: Engine) -> int:
    return support.count(engine, RelayDelivery, RelayDelivery.status == "delivered")


def test_a_rediss_endpoint_delivers_over_tls_to_a_server_whose_ca_is_trusted(
    engine: Engine, tls_redis: tuple[int, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the server's CA in SSL_CERT_FILE, each event arrives over TLS, signed."""
    port, cert = tls_redis
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    _, secret = support.add_endpoint(engine, f"rediss://localhost:{port}/0?stream={STREAM}")
    events = support.emit_events(engine, support.add_transfers(engine, 3))
    support.run_until(engine, lambda: _delivered(engine) == len(events))
    messages = _messages(port, cert)
    assert sorted(m.broker_id for m in messages) == sorted(events)
    assert all(m.verified([secret]) for m in messages)


def test_a_rediss_endpoint_refuses_a_certificate_no_trusted_ca_signed(
    engine: Engine, tls_redis: tuple[int, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the server's CA trusted, attempts fail on the certificate and nothing is
    published: the relay never falls back to an unverified connection."""
    port, cert = tls_redis
    elsewhere = tmp_path / "other-ca"
    elsewhere.mkdir()
    other, _ = _certificate(elsewhere)
    monkeypatch.setenv("SSL_CERT_FILE", str(other))
    support.add_endpoint(engine, f"rediss://localhost:{port}/0?stream={STREAM}")
    support.emit_events(engine, support.add_transfers(engine, 1))
    support.run_until(engine, lambda: len(support.attempts(engine)) >= 2, schedule=(0.05,) * 50)
    attempts = support.attempts(engine)
    assert len(attempts) >= 2
    assert all(a.outcome == "retry" for a in attempts)
    assert any("certificate" in (a.error or "").lower() for a in attempts), [
        a.error for a in attempts
    ]
    assert _delivered(engine) == 0
    assert _messages(port, cert) == []
