"""`payrecon serve` as a user starts it: start-up errors, the no-check warning, the limit."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.processes import PAYRECON, payrecon_env, start_serve, stop
from tests.support.servers import free_port

TOKEN = "Tok0123456789abcdefXYZ"


def _serve(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PAYRECON, "serve", *args], env=env, capture_output=True, text=True, timeout=60
    )


def test_serve_on_a_port_in_use_exits_2_with_one_line(tmp_path: Path) -> None:
    """A port another process listens on stops `serve` with exit 2 and one line saying so."""
    env = payrecon_env(database_url=f"sqlite:///{tmp_path}/x.db")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = _serve(["--port", str(port)], env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"payrecon: cannot listen on 127.0.0.1:{port}: ")
    assert "in use" in lines[0]


@pytest.mark.parametrize("host", ["192.0.2.1", "no-such-host.invalid", "::zz"])
def test_serve_on_an_address_it_cannot_bind_exits_2_with_one_line(
    tmp_path: Path, host: str
) -> None:
    """An address that is not this machine's, or not an address, is exit 2 and one line."""
    env = payrecon_env(database_url=f"sqlite:///{tmp_path}/x.db")
    result = _serve(["--host", host, "--port", str(free_port())], env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"payrecon: cannot listen on {host}:")


@pytest.mark.parametrize("secret", ["whsec_", "whsec_!!!!", "whsec_short", "whsec_c2hvcnQ="])
def test_a_malformed_standard_secret_stops_serve_with_exit_2(tmp_path: Path, secret: str) -> None:
    """A `whsec_` secret that is empty, not base64 or too short is refused at start."""
    env = payrecon_env(database_url=f"sqlite:///{tmp_path}/x.db", webhook_standard_secret=secret)
    result = _serve(["--port", str(free_port())], env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("payrecon: PAYRECON_WEBHOOK_STANDARD_SECRET: must ")
    encoded = secret.removeprefix("whsec_")
    assert not encoded or encoded not in lines[0]


@contextlib.contextmanager
def _serving(env: dict[str, str], log: Path, args: tuple[str, ...] = ()) -> Iterator[str]:
    process, port = start_serve(env, log=log, args=args)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def _warnings(log: Path) -> list[str]:
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    return [line["event"] for line in lines if line.get("level") == "warning"]


def test_serve_without_a_sender_check_warns_once_and_still_accepts(
    database_url: str, tmp_path: Path
) -> None:
    """With no sender check on, one warning line says so at start; a delivery is accepted."""
    log = tmp_path / "serve.log"
    with _serving(payrecon_env(database_url=database_url), log) as url:
        body = b'{"event":"collection.paid","data":{"reference":"C"}}'
        response = httpx.post(
            f"{url}/webhook", content=body, headers={"content-type": "application/json"}
        )
    assert response.status_code == 200
    warnings = _warnings(log)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("no webhook sender check configured")


def test_serve_with_a_sender_check_does_not_warn(database_url: str, tmp_path: Path) -> None:
    """A path token is a sender check: no warning at start."""
    log = tmp_path / "serve.log"
    with _serving(payrecon_env(database_url=database_url, webhook_token=TOKEN), log) as url:
        assert httpx.get(f"{url}/healthz").status_code == 200
    assert _warnings(log) == []


@pytest.mark.parametrize("how", ["setting", "flag"])
def test_the_concurrency_limit_answers_503_past_it(
    database_url: str, tmp_path: Path, how: str
) -> None:
    """Past the limit (here 3 connections), a new request gets 503 at once; within it, 200."""
    env = payrecon_env(database_url=database_url)
    args: tuple[str, ...] = ("--limit-concurrency", "3") if how == "flag" else ()
    if how == "setting":
        env["PAYRECON_LIMIT_CONCURRENCY"] = "3"
    with _serving(env, tmp_path / "serve.log", args) as url:
        port = int(url.rsplit(":", 1)[1])
        assert httpx.get(f"{url}/healthz").status_code == 200
        # Three senders that open a request and never finish its headers.
        stalled = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(3)]
        try:
            for sock in stalled:
                sock.sendall(b"POST /webhook HTTP/1.1\r\nHost: x\r\n")
            refused = httpx.get(f"{url}/healthz")
        finally:
            for sock in stalled:
                sock.close()
    assert refused.status_code == 503


def _closed_by_server(sock: socket.socket) -> bool:
    """True when the server closes `sock` (waits at most 20 s; a timeout means it did not)."""
    sock.settimeout(20)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False


def test_unfinished_headers_are_cut_off_after_the_header_timeout(
    database_url: str, tmp_path: Path
) -> None:
    """A connection whose request headers stop half-way is closed by the server, whether it is
    the connection's first request or a later one on a kept-alive connection."""
    env = payrecon_env(database_url=database_url, header_timeout="0.5")
    with _serving(env, tmp_path / "serve.log") as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as first:
            first.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            assert _closed_by_server(first)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as later:
            later.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = b""
            for _ in range(100):  # the answer is one small response
                answer += later.recv(65536)
                if b'{"status":"ok"}' in answer:
                    break
            assert answer.startswith(b"HTTP/1.1 200 ")
            later.sendall(b"GET /healthz HTTP/1.1\r\nHo")
            assert _closed_by_server(later)
        # Complete requests are served as before.
        assert httpx.get(f"{url}/healthz").status_code == 200
